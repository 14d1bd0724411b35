"""Who am I? The launch environment of this process, read as the tools read it
(tools/common/launch_env.cc, mirrored here: same launchers, same order, same checks, same messages).

  hetccl-run  HETCCL_RANK, HETCCL_NRANKS, HETCCL_LOCAL_RANK, HETCCL_LOCAL_SIZE, HETCCL_UNIQUE_ID (hex)
  torchrun    RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; the root listens
              on MASTER_ADDR at MASTER_PORT+1 (torch's own store holds MASTER_PORT)
  Open MPI    OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE}; root address from HETCCL_COMM_ID
  Slurm       SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID + SLURM_STEP_TASKS_PER_NODE (or
              SLURM_TASKS_PER_NODE); root from HETCCL_COMM_ID, else the first host of SLURM_STEP_NODELIST
              (or SLURM_NODELIST) at port 15000 + SLURM_JOB_ID % 15000
Launchers other than hetccl-run cannot hand out a secret: every rank reads the same HETCCL_SECRET (32+
hex digits) and rank 0 starts the rendezvous root inside init. The unique id built here is byte for byte
the one the C tools build (layout: src/bootstrap/unique_id.hpp), so Python and C ranks can share a job.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import socket
import struct
from dataclasses import dataclass

from ._errors import InvalidArgumentError

_MAX_RANKS = 1 << 24
_ID_BYTES = 128
_MAGIC = 0x44494348  # "HCID"
_LAYOUT_VERSION = 1
_FLAG_RANK0_STARTS_ROOT = 1
_SECRET_LABEL = b"hetccl launcher secret v1"

_HETCCL_RUN_HINT = ("hetccl-run sets it; to launch by hand set HETCCL_RANK, HETCCL_NRANKS, HETCCL_LOCAL_RANK, "
                    "HETCCL_LOCAL_SIZE and HETCCL_UNIQUE_ID")
_TORCHRUN_HINT = ("torchrun sets it; to launch torchrun-style by hand set all of RANK, WORLD_SIZE, LOCAL_RANK, "
                  "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and HETCCL_SECRET)")
_OPENMPI_HINT = "mpirun (Open MPI) sets it"
_SLURM_HINT = "srun sets it inside a job step"
_COMM_ID_HINT = ("set it to <host of rank 0>:<free port> on every rank, e.g. mpirun -x "
                 "HETCCL_COMM_ID=node1:29600")
_SECRET_HINT = ("outside hetccl-run every rank needs the same job secret of at least 32 hex digits: "
                "export HETCCL_SECRET=$(openssl rand -hex 32) before torchrun/srun, and pass it on "
                "(mpirun -x HETCCL_SECRET)")

# Variables of the library's configuration registry with an NCCL alias (src/core/config.cc).
_ALIASES = {"HETCCL_COMM_ID": "NCCL_COMM_ID"}


@dataclass(frozen=True)
class LaunchEnv:
    rank: int          #: in [0, size)
    size: int          #: >= 1
    local_rank: int    #: rank among the processes of this host
    local_size: int    #: processes on this host
    unique_id: bytes   #: 128 bytes, the same on every rank of the job
    source: str        #: "hetccl-run", "torchrun", "openmpi" or "slurm"


class _Vars:
    def __init__(self, environ):
        self.env = environ

    def get(self, name):
        v = self.env.get(name)
        if v is None and name in _ALIASES:
            v = self.env.get(_ALIASES[name])
        return v

    def has(self, name):
        return self.get(name) is not None

    def require(self, name, hint):
        v = self.get(name)
        if v is None:
            raise InvalidArgumentError(f"{name} is not set ({hint})")
        if v == "":
            raise InvalidArgumentError(f"{name} is set but empty ({hint})")
        return v

    def integer(self, name, lo, hi, hint):
        return parse_decimal(name, self.require(name, hint), lo, hi)


def parse_decimal(what, text, lo, hi):
    if text == "":
        raise InvalidArgumentError(f"{what} is empty; expected a decimal integer")
    digits = text[1:] if text[0] == "-" else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        raise InvalidArgumentError(f"{what}='{text}' is not a decimal integer")
    value = int(text)
    if value < lo or value > hi:
        raise InvalidArgumentError(f"{what}='{text}' is outside [{lo}, {hi}]")
    return value


def _validate(rank, size, local_rank, local_size, names):
    n_rank, n_size, n_lrank, n_lsize = names
    if rank >= size:
        raise InvalidArgumentError(f"{n_rank}={rank} is not below {n_size}={size} (ranks are numbered 0..size-1)")
    if local_size > size:
        raise InvalidArgumentError(f"{n_lsize}={local_size} exceeds {n_size}={size}")
    if local_rank >= local_size:
        raise InvalidArgumentError(f"{n_lrank}={local_rank} is not below {n_lsize}={local_size}")


def _rank_numbers(v, names, hint, local_size=0):
    size = v.integer(names[1], 1, _MAX_RANKS, hint)
    rank = v.integer(names[0], 0, _MAX_RANKS, hint)
    local_rank = v.integer(names[2], 0, _MAX_RANKS, hint)
    if local_size == 0:
        local_size = v.integer(names[3], 1, _MAX_RANKS, hint)
    _validate(rank, size, local_rank, local_size, names)
    return rank, size, local_rank, local_size


# ---- the unique id (src/bootstrap/unique_id.cc) ------------------------------------------------------

def _parse_address(text):
    """host:port or [ipv6]:port -> (family 4|6, packed address, port), as SocketAddress::parse (IPv4 preferred)."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or close + 1 >= len(text) or text[close + 1] != ":":
            raise InvalidArgumentError(f"address '{text}' is not of the form [ipv6]:port")
        host, port = text[1:close], text[close + 2:]
    else:
        colon = text.rfind(":")
        if colon <= 0:
            raise InvalidArgumentError(f"address '{text}' is not of the form host:port")
        host, port = text[:colon], text[colon + 1:]
        if ":" in host:
            raise InvalidArgumentError(f"address '{text}': write IPv6 addresses as [addr]:port")
    if not port.isdigit() or not port or int(port) > 65535:
        raise InvalidArgumentError(f"address '{text}': '{port}' is not a port number")
    try:
        found = socket.getaddrinfo(host, None, socket.AF_UNSPEC, socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise InvalidArgumentError(f"address '{text}': cannot resolve '{host}': {e.strerror}") from None
    if not found:
        raise InvalidArgumentError(f"address '{text}': cannot resolve '{host}'")
    pick = next((a for a in found if a[0] == socket.AF_INET), found[0])
    if pick[0] == socket.AF_INET:
        return 4, socket.inet_pton(socket.AF_INET, pick[4][0]), int(port)
    addr = pick[4][0].split("%")[0]
    return 6, socket.inet_pton(socket.AF_INET6, addr), int(port)


def _parse_root(origin, text):
    try:
        fam, addr, port = _parse_address(text)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"root address '{text}' (from {origin}) is not usable: {e}") from None
    if port == 0:
        raise InvalidArgumentError(f"root address '{text}' (from {origin}) needs a fixed port, not 0")
    return fam, addr, port


def encode_unique_id(family, addr, port, secret, rank0_starts_root):
    out = bytearray(_ID_BYTES)
    struct.pack_into("<IHH", out, 0, _MAGIC, _LAYOUT_VERSION, _FLAG_RANK0_STARTS_ROOT if rank0_starts_root else 0)
    out[8] = family
    struct.pack_into("<H", out, 10, port)
    out[12:12 + len(addr)] = addr
    out[28:60] = secret
    return bytes(out)


def launcher_secret(secret_hex):
    """The 32 secret bytes every rank derives from HETCCL_SECRET (HMAC-SHA256, zero key, over a label
    and the lower-cased text): launcherIdFromSecret in src/bootstrap/unique_id.cc."""
    if len(secret_hex) < 32:
        raise InvalidArgumentError(f"HETCCL_SECRET has {len(secret_hex)} hex digits; at least 32 are needed")
    for i, c in enumerate(secret_hex):
        if c not in "0123456789abcdefABCDEF":
            raise InvalidArgumentError(f"HETCCL_SECRET: character {i} is not a hex digit")
    return hmac.new(bytes(32), _SECRET_LABEL + secret_hex.lower().encode(), hashlib.sha256).digest()


def _id_from_secret(v, root):
    secret = v.require("HETCCL_SECRET", _SECRET_HINT)
    try:
        key = launcher_secret(secret)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"HETCCL_SECRET is not usable: {e} ({_SECRET_HINT})") from None
    fam, addr, port = root
    return encode_unique_id(fam, addr, port, key, True)


def _host_port(host, port):
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


# ---- the launchers ----------------------------------------------------------------------------------

def _from_hetccl_run(v):
    r = _rank_numbers(v, ("HETCCL_RANK", "HETCCL_NRANKS", "HETCCL_LOCAL_RANK", "HETCCL_LOCAL_SIZE"),
                      _HETCCL_RUN_HINT)
    hexid = v.require("HETCCL_UNIQUE_ID", _HETCCL_RUN_HINT)
    try:
        if len(hexid) != 2 * _ID_BYTES:
            raise ValueError(f"expected {2 * _ID_BYTES} hex digits, got {len(hexid)}")
        uid = bytes.fromhex(hexid)
        if struct.unpack_from("<I", uid)[0] != _MAGIC:
            raise ValueError("bad magic (not a hetccl unique id)")
    except ValueError as e:
        raise InvalidArgumentError(f"HETCCL_UNIQUE_ID is not a unique id (expected the {2 * _ID_BYTES} hex digits "
                                   f"hetccl-run passes): {e}") from None
    return LaunchEnv(*r, uid, "hetccl-run")


def _from_torchrun(v):
    r = _rank_numbers(v, ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"), _TORCHRUN_HINT)
    addr = v.require("MASTER_ADDR", _TORCHRUN_HINT)
    port = v.integer("MASTER_PORT", 1, 65534, _TORCHRUN_HINT)
    root = _parse_root("MASTER_ADDR and MASTER_PORT+1", _host_port(addr, port + 1))
    return LaunchEnv(*r, _id_from_secret(v, root), "torchrun")


def _from_openmpi(v):
    r = _rank_numbers(v, ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                          "OMPI_COMM_WORLD_LOCAL_SIZE"), _OPENMPI_HINT)
    root = _parse_root("HETCCL_COMM_ID", v.require("HETCCL_COMM_ID", _COMM_ID_HINT))
    return LaunchEnv(*r, _id_from_secret(v, root), "openmpi")


def first_host_of_node_list(what, node_list):
    """tools/common/slurm_lists.cc: "node[01-04,07],gpu5" -> "node01"."""
    depth, entry = 0, None
    for i, c in enumerate(node_list):
        if c == "[":
            depth += 1
            if depth > 1:
                raise InvalidArgumentError(f"{what}='{node_list}' has nested '[' brackets")
        elif c == "]":
            depth -= 1
            if depth < 0:
                raise InvalidArgumentError(f"{what}='{node_list}' has a ']' without '['")
        elif c == "," and depth == 0:
            entry = node_list[:i]
            break
    if entry is None:
        if depth != 0:
            raise InvalidArgumentError(f"{what}='{node_list}' has a '[' without ']'")
        entry = node_list
    if not entry:
        raise InvalidArgumentError(f"{what}='{node_list}' does not start with a host name")
    host, i = "", 0
    while i < len(entry):
        if entry[i] != "[":
            host += entry[i]
            i += 1
            continue
        close = entry.find("]", i)
        rng = entry[i + 1:close]
        cut = min([p for p in (rng.find(","), rng.find("-")) if p >= 0], default=len(rng))
        first = rng[:cut]
        if not first:
            raise InvalidArgumentError(f"{what}='{node_list}' has an empty bracket range")
        host += first
        i = close + 1
    return host


def tasks_on_node(what, tasks_per_node, node_index):
    """tools/common/slurm_lists.cc: "2(x3),1" -> nodes 0..2 run 2 tasks, node 3 runs 1."""
    first_node, found = 0, None
    for entry in (tasks_per_node.split(",") if tasks_per_node else []):
        repeat = 1
        paren = entry.find("(")
        if paren >= 0:
            rep = entry[paren:]
            if len(rep) < 4 or rep[:2] != "(x" or rep[-1] != ")":
                raise InvalidArgumentError(f"{what}='{tasks_per_node}': expected COUNT or COUNT(xREPEAT), got "
                                           f"'{entry}'")
            repeat = parse_decimal(what, rep[2:-1], 1, 1 << 20)
            entry = entry[:paren]
        count = parse_decimal(what, entry, 1, 1 << 20)
        if found is None and node_index < first_node + repeat:
            found = count
        first_node += repeat
    if found is not None:
        return found
    raise InvalidArgumentError(f"{what}='{tasks_per_node}' lists {first_node} nodes; node index {node_index} is "
                               "not among them")


def slurm_root_port(job_id):
    return 15000 + job_id % 15000


def _from_slurm(v):
    list_name = "SLURM_STEP_TASKS_PER_NODE" if v.has("SLURM_STEP_TASKS_PER_NODE") else "SLURM_TASKS_PER_NODE"
    tasks = v.require(list_name, _SLURM_HINT)
    node = v.integer("SLURM_NODEID", 0, _MAX_RANKS, _SLURM_HINT)
    local_size = tasks_on_node(list_name, tasks, node)
    r = _rank_numbers(v, ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", list_name), _SLURM_HINT, local_size)
    if v.has("HETCCL_COMM_ID"):
        root = _parse_root("HETCCL_COMM_ID", v.require("HETCCL_COMM_ID", _COMM_ID_HINT))
    else:
        nl_name = "SLURM_STEP_NODELIST" if v.has("SLURM_STEP_NODELIST") else "SLURM_NODELIST"
        host = first_host_of_node_list(nl_name, v.require(nl_name, _SLURM_HINT))
        job = v.integer("SLURM_JOB_ID", 0, 1 << 62, _SLURM_HINT + "; or set HETCCL_COMM_ID")
        root = _parse_root(f"the first host of {nl_name} and SLURM_JOB_ID", _host_port(host, slurm_root_port(job)))
    return LaunchEnv(*r, _id_from_secret(v, root), "slurm")


def launch_env(environ=None) -> LaunchEnv:
    """Reads the launch environment (os.environ, or the mapping given). Raises InvalidArgumentError naming
    the missing or garbled variable, or saying that no launcher was found."""
    v = _Vars(os.environ if environ is None else environ)
    if any(v.has(n) for n in ("HETCCL_UNIQUE_ID", "HETCCL_RANK", "HETCCL_NRANKS")):
        return _from_hetccl_run(v)
    if any(v.has(n) for n in ("RANK", "WORLD_SIZE")):
        return _from_torchrun(v)
    if any(v.has(n) for n in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        return _from_openmpi(v)
    if v.has("SLURM_PROCID"):
        return _from_slurm(v)
    raise InvalidArgumentError(
        "no launcher found: none of HETCCL_RANK (hetccl-run), RANK (torchrun), OMPI_COMM_WORLD_RANK (mpirun) or "
        "SLURM_PROCID (srun) is set; start the program with one of them, e.g. hetccl-run -n 2 PROGRAM")


def launched() -> bool:
    """True when some launcher's variables are present (init() would find a job)."""
    e = os.environ
    return any(n in e for n in ("HETCCL_UNIQUE_ID", "HETCCL_RANK", "HETCCL_NRANKS", "RANK", "WORLD_SIZE",
                                "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID"))
