"""Agents (include/hetccl/hetccl_agent.h): transfers between independent processes, without a communicator.

    with hetccl.Agent("decode-0", secret=key) as agent:      # bytes (>= 16), or hex as in HETCCL_SECRET
        mem = agent.register(kv)                             # any buffer / NumPy / DLPack / CUDA array
        peer = agent.load_remote(blob_of_prefill)            # the peer's agent.metadata(), any channel
        with agent.prep_xfer("read", peer, [(mem.id, remote_id, 0, remote_off, nbytes)], notif=b"done") as x:
            x.post()
            x.wait()                                         # RemoteError naming the peer when it failed
        for peer, msg in agent.get_notifs(): ...

Bound at the first use when the loaded library exports every function of hetccl_agent.h (agent_available());
`import hetccl` works with a library that predates them (AgentUnavailableError at Agent()).

Lifetimes. A registration keeps its buffer alive, and the Agent keeps its registrations, until deregister()
or close(): peers may read or write a registered buffer at any time, dropping the AgentMemory object does
not end the registration. An Xfer dropped while its post still runs is released once it ended. close()
(or leaving the with block) destroys the agent: its registrations and transfers become unusable.
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import sys
import threading
import time

from . import _lib
from ._dlpack import GPU_DEVICES, export
from ._errors import (IN_PROGRESS, INVALID_ARGUMENT, INVALID_USAGE, ArgumentOverflowError, HetcclError,
                      InvalidArgumentError, InvalidUsageError)
from ._library import _error, check
from ._rma import MEM_KINDS
from ._types import _int32, _uint

NAME_MAX = 63            # HETCCL_AGENT_NAME_MAX
NOTIF_MAX = 4096         # HETCCL_AGENT_NOTIF_MAX
_NOTIF_FIRST_CAPACITY = 256  # get_notif's first buffer; a larger message is taken again with its size


class AgentOp(enum.IntEnum):
    """hetcclAgentOp_t."""

    READ = 0   # peer -> local
    WRITE = 1  # local -> peer


READ, WRITE = AgentOp.READ, AgentOp.WRITE
_OPS = {"read": READ, "write": WRITE, READ: READ, WRITE: WRITE}


class AgentOptions(ctypes.Structure):
    """hetcclAgentOptions_t."""

    _fields_ = [("secret", ctypes.c_void_p), ("secretBytes", ctypes.c_size_t), ("listenAddress", ctypes.c_char_p),
                ("device", ctypes.c_int), ("timeoutSeconds", ctypes.c_double)]


class AgentRange(ctypes.Structure):
    """hetcclAgentRange_t: 32 bytes."""

    _fields_ = [("localRegion", ctypes.c_uint32), ("remoteRegion", ctypes.c_uint32), ("localOffset", ctypes.c_uint64),
                ("remoteOffset", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]


assert ctypes.sizeof(AgentRange) == 32
RANGE_FIELDS = ("localRegion", "remoteRegion", "localOffset", "remoteOffset", "bytes")
_RANGE_TYPES = ("u4", "u4", "u8", "u8", "u8")

_vp, _sz, _u32, _u64, _int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
_P = ctypes.POINTER
_FNS = [
    ("hetcclAgentOptionsInit", [_P(AgentOptions)]),
    ("hetcclAgentCreate", [ctypes.c_char_p, _P(AgentOptions), _P(_vp)]),
    ("hetcclAgentDestroy", [_vp]),
    ("hetcclAgentGetMetadata", [_vp, _vp, _P(_sz)]),
    ("hetcclAgentLoadRemote", [_vp, _vp, _sz, _vp]),
    ("hetcclAgentForgetRemote", [_vp, ctypes.c_char_p]),
    ("hetcclAgentRegister", [_vp, _vp, _sz, _P(_vp), _P(_u32)]),
    ("hetcclAgentDeregister", [_vp]),
    ("hetcclAgentMemQuery", [_vp, _P(_u32), _P(_int), _P(_sz)]),
    ("hetcclAgentStridedRanges", [_vp, _sz, _u32, _u64, _u64, _u32, _u64, _u64, _u64]),
    ("hetcclAgentPrepXfer", [_vp, _int, ctypes.c_char_p, _vp, _sz, _vp, _sz, _P(_vp)]),
    ("hetcclAgentPostXfer", [_vp]),
    ("hetcclAgentCheckXfer", [_vp]),
    ("hetcclAgentWaitXfer", [_vp]),
    ("hetcclAgentCancelXfer", [_vp]),
    ("hetcclAgentReleaseXfer", [_vp]),
    ("hetcclAgentGenNotif", [_vp, ctypes.c_char_p, _vp, _sz]),
    ("hetcclAgentGetNotif", [_vp, _vp, _vp, _sz, _P(_sz), _P(_int)]),
]


class AgentUnavailableError(HetcclError, NotImplementedError):
    """The loaded libhetccl does not export the functions of hetccl_agent.h (an older build)."""

    result = INVALID_USAGE


class _Fns:
    pass


_bind_lock = threading.Lock()
_fns = None      # the bound functions (a _Fns), once every one was found
_missing = None  # names the library lacks (None: not looked up yet)


def agent_missing():
    """Names of the hetccl_agent.h functions the loaded library does not export (empty: agents available)."""
    global _fns, _missing
    if _missing is None:
        _lib.load()
        with _bind_lock:
            if _missing is None:
                ns, missing = _Fns(), []
                for name, argtypes in _FNS:
                    try:
                        f = getattr(_lib.lib, name)
                    except AttributeError:
                        missing.append(name)
                        continue
                    f.restype = ctypes.c_int
                    f.argtypes = argtypes
                    setattr(ns, name, f)
                if not missing:
                    _fns = ns
                _missing = missing
    return _missing


def agent_available() -> bool:
    """True when the loaded libhetccl exports every function of hetccl_agent.h."""
    return not agent_missing()


def _f():
    if _fns is None:
        missing = agent_missing()
        if missing:
            raise AgentUnavailableError(
                f"{_lib.library_path()} does not export the agent API of hetccl_agent.h (missing "
                f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}): this library predates it")
    return _fns


# ---- arguments -----------------------------------------------------------------------------------------

def _cstr(value, what):
    """A name argument -> NUL-terminated bytes (the library checks length and characters)."""
    if isinstance(value, bytes):
        b = value
    elif isinstance(value, str):
        try:
            b = value.encode("ascii")
        except UnicodeEncodeError:
            raise InvalidArgumentError(f"{what}={value!r}: agent names are ASCII ([A-Za-z0-9._:-])", 4) from None
    else:
        raise TypeError(f"{what} must be a str, got {value!r}")
    if b"\0" in b:
        raise InvalidArgumentError(f"{what}={value!r} contains a NUL character", 4)
    return b


def _bytes(value, what):
    """A bytes-like argument (bytes, bytearray, memoryview, any buffer) -> bytes."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        raise TypeError(f"{what} must be bytes, got a str (encode it)")
    try:
        return memoryview(value).tobytes()
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, got {type(value).__name__}") from None


def _secret(secret):
    """secret= -> the bytes for hetcclAgentOptions_t.secret. Bytes-like: as they are. A str: hex digits (>= 32, any
    case) decoded to bytes, as the library decodes HETCCL_SECRET (hetccl_agent.h): agents given secret=s and
    agents started with HETCCL_SECRET=s trust each other (test_agent.py's test_secret_from_environment)."""
    if isinstance(secret, str):
        if len(secret) < 32 or len(secret) % 2 or any(c not in "0123456789abcdefABCDEF" for c in secret):
            raise InvalidArgumentError("secret: a str secret is an even number of hex digits, at least 32, as in "
                                       "HETCCL_SECRET (give raw key bytes as bytes)", 4)
        return bytes.fromhex(secret)
    return _bytes(secret, "secret")


def _op(op):
    try:
        return _OPS[op.lower() if isinstance(op, str) else op]
    except (KeyError, TypeError):
        raise InvalidArgumentError(f"op={op!r}: expected 'read' or 'write' (hetccl.READ / hetccl.WRITE)", 4) from None


def range_dtype():
    """The NumPy dtype of hetcclAgentRange_t (32 bytes): a contiguous 1-D array of it goes to C as it is."""
    import numpy as np

    return np.dtype({"names": list(RANGE_FIELDS), "formats": ["<u4" if sys.byteorder == "little" else ">u4"] * 2
                     + ["<u8" if sys.byteorder == "little" else ">u8"] * 3, "offsets": [0, 4, 8, 16, 24],
                     "itemsize": 32})


def _native(typestr, kind_size):
    """typestr ('<u8', '|u1', '=u4') is the native form of kind_size ('u8')."""
    order = typestr[0]
    native = "<" if sys.byteorder == "little" else ">"
    return typestr[1:] == kind_size and (order in ("=", native) or (order == "|" and kind_size[1:] == "1"))


def _range_layout(ai):
    """True when an __array_interface__ describes a C-contiguous 1-D array of hetcclAgentRange_t."""
    descr = ai.get("descr") or []
    if len(ai["shape"]) != 1 or ai["typestr"] != "|V32" or len(descr) != 5:
        return False
    strides = ai.get("strides")
    if strides is not None and ai["shape"][0] > 1 and tuple(strides) != (32,):
        return False
    return all(len(d) == 2 and isinstance(d[1], str) and _native(d[1], t) for d, t in zip(descr, _RANGE_TYPES))


def _check_columns(np, cols, n):
    """Range-checks five integer columns (vectorised) and packs them into a hetcclAgentRange_t array."""
    names = ("local_region", "remote_region", "local_offset", "remote_offset", "bytes")
    for i, c in enumerate(cols):
        if c.dtype.kind not in "iu":
            raise InvalidArgumentError(f"ranges: column {names[i]} has dtype {c.dtype}: integers expected", 4)
        if c.dtype.kind == "i" and n and int(c.min()) < 0:
            raise InvalidArgumentError(f"ranges: a {names[i]} is negative ({int(c.min())})", 4)
        if i < 2 and n and c.dtype.itemsize > 4 and int(c.max()) >> 32:
            raise ArgumentOverflowError(f"ranges: a {names[i]} ({int(c.max())}) does not fit in 32 bits", 4)
    out = np.empty(n, range_dtype())
    for name, c in zip(RANGE_FIELDS, cols):
        out[name] = c
    return out


def _ranges_from_array(ranges, ai):
    if _range_layout(ai):  # already hetcclAgentRange_t[n]: its memory goes to C as it is
        return ai["data"][0], ai["shape"][0], ranges
    import numpy as np

    a = np.asarray(ranges)
    if a.dtype.names is not None and a.ndim == 1 and len(a.dtype.names) == 5:  # another record layout
        cols = [a[name] for name in a.dtype.names]
    elif a.ndim == 2 and a.shape[1] == 5:
        cols = [a[:, i] for i in range(5)]
    elif a.ndim == 1 and a.shape[0] == 5 and a.dtype.names is None:  # one range
        cols = [a[i:i + 1] for i in range(5)]
    else:
        raise InvalidArgumentError(f"ranges: expected an (n, 5) integer array (local_region, remote_region, "
                                   f"local_offset, remote_offset, bytes) or a 1-D array of hetccl.range_dtype(), "
                                   f"got shape {a.shape} dtype {a.dtype}", 4)
    out = _check_columns(np, cols, len(cols[0]))
    return out.ctypes.data, len(out), out


def _ranges(ranges):
    """(address, count, keep) of hetcclAgentRange_t[count] from: a ctypes array of AgentRange (strided_ranges),
    an array (NumPy) of range_dtype() layout (zero-copy), an (n, 5) integer array, or 5-tuples (local_region,
    remote_region, local_offset, remote_offset, bytes); a region may be given as its AgentMemory."""
    if isinstance(ranges, ctypes.Array) and ranges._type_ is AgentRange:
        return ctypes.addressof(ranges), len(ranges), ranges
    if isinstance(ranges, AgentRange):
        return ctypes.addressof(ranges), 1, ranges
    ai = getattr(ranges, "__array_interface__", None)
    if ai is not None:
        return _ranges_from_array(ranges, ai)
    rows = []
    for i, r in enumerate(ranges):
        r = tuple(r)
        if len(r) != 5:
            raise InvalidArgumentError(f"ranges[{i}]: expected (local_region, remote_region, local_offset, "
                                       f"remote_offset, bytes), got {r!r}", 4)
        lr, rr, lo, ro, n = r
        if isinstance(lr, AgentMemory):
            lr = lr.id
        rows.append((_uint(lr, f"ranges[{i}].local_region", 32), _uint(rr, f"ranges[{i}].remote_region", 32),
                     _uint(lo, f"ranges[{i}].local_offset"), _uint(ro, f"ranges[{i}].remote_offset"),
                     _uint(n, f"ranges[{i}].bytes")))
    if not rows:
        return None, 0, None
    arr = (AgentRange * len(rows))(*rows)
    return ctypes.addressof(arr), len(rows), arr


def strided_ranges(count: int, local_region, local_offset: int, local_stride: int, remote_region: int,
                   remote_offset: int, remote_stride: int, nbytes: int):
    """hetcclAgentStridedRanges: `count` ranges, range i moving `nbytes` between local_offset + i*local_stride
    of local_region and remote_offset + i*remote_stride of remote_region. Returns a ctypes array of
    AgentRange (prep_xfer takes it as it is; np.frombuffer(r, hetccl.range_dtype()) views it)."""
    f = _f()
    count = _uint(count, "count")
    if isinstance(local_region, AgentMemory):
        local_region = local_region.id
    arr = (AgentRange * count)()
    check(f.hetcclAgentStridedRanges(ctypes.addressof(arr) if count else None, count,
                                     _uint(local_region, "local_region", 32), _uint(local_offset, "local_offset"),
                                     _uint(local_stride, "local_stride"), _uint(remote_region, "remote_region", 32),
                                     _uint(remote_offset, "remote_offset"), _uint(remote_stride, "remote_stride"),
                                     _uint(nbytes, "nbytes")))
    return arr


# ---- memory of an object -------------------------------------------------------------------------------

def _interface_view(ai, what, gpu):
    """(address, nbytes, keep) from an __array_interface__ / __cuda_array_interface__ dict (C-contiguous)."""
    data = ai.get("data")
    if not isinstance(data, tuple) or data[0] is None:
        raise InvalidArgumentError(f"{what}: its array interface gives no data pointer", 4)
    ptr, readonly = int(data[0]), bool(data[1])
    if readonly:
        raise InvalidArgumentError(f"{what} is read-only but peers may write into a registration", 4)
    typestr = ai["typestr"]
    itemsize = int(typestr[2:])
    shape = tuple(ai["shape"])
    n = 1
    for d in shape:
        n *= d
    strides = ai.get("strides")
    if strides is not None and n > 1:
        expect = itemsize
        for d, s in zip(reversed(shape), reversed(tuple(strides))):
            if d != 1 and s != expect:
                raise InvalidArgumentError(f"{what} is not contiguous (shape {list(shape)}, strides {list(strides)} "
                                           "bytes): pass a contiguous array", 4)
            expect *= d
    ptr += int(ai.get("offset", 0) or 0)
    return ptr, n * itemsize, gpu


def _device_of(obj):
    """torch exports a CUDA tensor through DLPack only while its device is the current one (a tensor of
    another GPU of the process raises): the export runs under that device. Other objects: no context."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor) and obj.is_cuda:
        return torch.cuda.device(obj.device)
    return contextlib.nullcontext()


def _memory_of(obj, device, what="registered buffer"):
    """(address, nbytes, keep) of obj's memory: DLPack objects and the buffer protocol through _dlpack.export
    (as communicators do), else __cuda_array_interface__ (device memory) or __array_interface__ (host)."""
    if not hasattr(obj, "__dlpack__"):
        cai = getattr(obj, "__cuda_array_interface__", None)
        if cai is not None:
            if device < 0:
                raise InvalidUsageError(f"{what} is GPU memory (__cuda_array_interface__) but this agent was created "
                                        "with device=-1 (host memory only)", 5)
            ptr, n, _ = _interface_view(cai, what, True)
            return ptr, n, obj
        try:
            memoryview(obj)
        except TypeError:
            ai = getattr(obj, "__array_interface__", None)
            if ai is not None:
                ptr, n, _ = _interface_view(ai, what, False)
                return ptr, n, obj
    with _device_of(obj):
        v = export(obj, None, True, what)
    if v[4] in GPU_DEVICES:
        if device < 0:
            raise InvalidUsageError(f"{what} is GPU memory (device {v[5]}) but this agent was created with device=-1 "
                                    "(host memory only)", 5)
        if v[5] != device:
            raise InvalidArgumentError(f"{what} is on device {v[5]} but this agent registers device {device}'s "
                                       "memory", 4)
    return v[0], v[1] * v[3], v


# ---- classes -------------------------------------------------------------------------------------------

class AgentMemory:
    """A registration of an Agent (hetcclAgentRegister): .id (the region id peers name it by, as listed in
    the agent's metadata), .kind ("host", "cuda", "hip"), .nbytes, .obj (the buffer, kept alive). Ended by
    deregister() or the agent's close(), not by dropping this object."""

    def __init__(self, agent, obj, nbytes=None):
        f = _f()
        h = agent._live()
        ptr, total, keep = _memory_of(obj, agent.device)
        n = total if nbytes is None else _uint(nbytes, "register: nbytes")
        if n <= 0 or n > total:
            raise InvalidArgumentError(f"register: nbytes {n} must be in [1, {total}] (the buffer's size)", 4)
        out, rid = ctypes.c_void_p(), ctypes.c_uint32()
        check(f.hetcclAgentRegister(h, ptr, n, ctypes.byref(out), ctypes.byref(rid)))
        self._m = out.value
        self._agent = agent
        self._keep = keep
        self.obj = obj
        self.id = rid.value
        self.kind, self.nbytes = "host", n
        agent._mems[self._m] = self  # peers may access it until deregister(): the agent keeps it (and obj)
        qid, kind, size = ctypes.c_uint32(), ctypes.c_int(), ctypes.c_size_t()
        check(f.hetcclAgentMemQuery(self._m, ctypes.byref(qid), ctypes.byref(kind), ctypes.byref(size)))
        self.kind = MEM_KINDS.get(kind.value, str(kind.value))
        self.nbytes = size.value

    def __repr__(self):
        return (f"<hetccl.AgentMemory region {self.id}, {self.kind}, {self.nbytes} bytes"
                f"{'' if self._m else ', deregistered'}>")

    @property
    def registered(self) -> bool:
        return bool(self._m) and self._agent._h is not None

    def deregister(self):
        """Ends the registration (peers' later accesses fail as stale) once the transfers using it ended (at
        most the agent's timeout), and releases the buffer. Idempotent; nothing to do after the agent's close()."""
        m, self._m = self._m, None
        if not m:
            return
        agent = self._agent
        agent._mems.pop(m, None)
        if agent._h is None:  # the agent was destroyed, and its registrations with it
            self._keep = self.obj = None
            return
        rc = _f().hetcclAgentDeregister(m)
        if rc:
            # The handle is released either way (hetccl_agent.h); a transfer may still touch the memory after
            # a failed wait: the agent keeps the buffer until it is closed.
            agent._zombies.append((self._keep, self.obj))
            self._keep = self.obj = None
            check(rc)
        self._keep = self.obj = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deregister()
        return False


class Xfer:
    """A prepared transfer (hetcclAgentPrepXfer): post() starts it (any number of times, one post at a
    time), check() -> True done / False running (raises its error), wait(), cancel(), release(). As a context
    manager: on leaving, a running post is waited for (cancelled when leaving on an exception), then released."""

    __slots__ = ("_x", "_agent", "_keep", "op", "peer", "nranges", "__weakref__")

    def __init__(self, agent, handle, op, peer, nranges, keep):
        self._x = handle
        self._agent = agent
        self._keep = keep
        self.op = op
        self.peer = peer
        self.nranges = nranges

    def __repr__(self):
        return (f"<hetccl.Xfer {self.op.name.lower()} of {self.nranges} range(s) with {self.peer!r}"
                f"{'' if self._x else ', released'}>")

    def _live(self):
        self._agent._live()
        if not self._x:
            raise InvalidArgumentError("this Xfer was released", 4)
        return self._x

    def post(self):
        """Starts the transfer (connecting to the peer first if needed); returns at once. InvalidUsageError
        while an earlier post of it still runs."""
        x = self._live()
        self._agent._reap()
        check(_f().hetcclAgentPostXfer(x))
        return self

    def check(self) -> bool:
        """Never blocks: True when the last post completed, False while it runs; raises the error that ended it
        (RemoteError naming the peer, ...), InvalidUsageError when never posted or cancelled."""
        rc = _f().hetcclAgentCheckXfer(self._live())
        if rc == 0:
            return True
        if rc == IN_PROGRESS:
            return False
        raise _error(rc, None)

    def wait(self):
        """Blocks until the last post ended (at most the agent's timeout after the post); raises its error.
        On the main thread it polls, so that Ctrl-C is seen."""
        x = self._live()
        f = _f()
        if threading.current_thread() is not threading.main_thread():
            check(f.hetcclAgentWaitXfer(x))
            return self
        chk = f.hetcclAgentCheckXfer
        spins, pause = 0, 20e-6
        while True:
            rc = chk(x)
            if rc != IN_PROGRESS:
                check(rc)
                return self
            spins += 1
            if spins > 64:
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)

    def cancel(self):
        """Cancels the last post without blocking: a queued one never starts, one on the wire is cut off.
        check() then reports False until it no longer touches the local memory, then raises InvalidUsageError."""
        check(_f().hetcclAgentCancelXfer(self._live()))

    def release(self):
        """Releases the transfer (InvalidUsageError while a post runs: cancel or wait first). Idempotent."""
        x = self._x
        if not x or self._agent._h is None:
            self._x = self._keep = None
            return
        rc = _f().hetcclAgentReleaseXfer(x)
        if rc == 0:
            self._x = self._keep = None
        check(rc)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if self._x and self._agent._h is not None:
            f = _f()
            if exc_type is not None:
                f.hetcclAgentCancelXfer(self._x)
            while f.hetcclAgentCheckXfer(self._x) == IN_PROGRESS:
                time.sleep(1e-4)
            self.release()
        return False

    def __del__(self):
        x = self._x
        if not x or _fns is None:
            return
        try:
            agent = self._agent
            if agent._h is None:
                return
            if _fns.hetcclAgentReleaseXfer(x) == INVALID_USAGE:  # still running: released once it ended
                agent._orphans.append((x, self._keep))
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class Agent:
    """This process's end of transfers with independent processes (hetcclAgentCreate).

    name: 1..63 characters of [A-Za-z0-9._:-], unique among the agents that load each other's metadata.
    secret: the deployment's shared secret: bytes (>= 16), or a str of >= 32 hex digits decoded to bytes as
        HETCCL_SECRET is (an agent given secret=s and one started with HETCCL_SECRET=s trust each other); None:
        HETCCL_SECRET.
    listen: "ip:port" (port 0: any); "": the interface HETCCL_SOCKET_IFNAME selects, any port.
    device: the GPU whose memory it registers (-1: host memory only). timeout: seconds (None: HETCCL_TIMEOUT).
    """

    READ = READ
    WRITE = WRITE

    def __init__(self, name, secret=None, listen="", device=-1, timeout=None):
        f = _f()
        self._h = None
        self._mems = {}      # registration handle -> AgentMemory (kept until deregister / close)
        self._orphans = []   # (xfer handle, keep) of dropped transfers still running
        self._zombies = []   # buffers of failed deregistrations, kept until close
        cname = _cstr(name, "name")
        device = _int32(device, "device")
        if timeout is not None:
            timeout = float(timeout)
            if not timeout > 0:
                raise InvalidArgumentError(f"timeout={timeout}: a positive number of seconds (None: HETCCL_TIMEOUT)", 4)
        opts = AgentOptions()
        rc = f.hetcclAgentOptionsInit(ctypes.byref(opts))
        if rc and secret is None:
            check(rc)
        key = None
        if secret is not None:
            raw = _secret(secret)
            key = ctypes.create_string_buffer(raw, max(1, len(raw)))
            opts.secret, opts.secretBytes = ctypes.addressof(key), len(raw)
        elif rc:
            opts.secret, opts.secretBytes = None, 0
        addr = _cstr(listen, "listen") if listen else None
        opts.listenAddress = addr
        opts.device = device
        opts.timeoutSeconds = 0.0 if timeout is None else timeout
        out = ctypes.c_void_p()
        try:
            rc = f.hetcclAgentCreate(cname, ctypes.byref(opts), ctypes.byref(out))
        finally:
            if key is not None:
                ctypes.memset(key, 0, len(key))
        check(rc)
        self._h = out.value
        self.name = cname.decode()
        self.device = device
        self.timeout = timeout

    def __repr__(self):
        return f"<hetccl.Agent {self.name!r}{'' if self._h else ', closed'}>"

    def _live(self):
        h = self._h
        if h is None:
            raise InvalidUsageError("this Agent was closed", 5)
        return h

    def _reap(self):
        """Releases the dropped transfers that have ended."""
        if not self._orphans:
            return
        f = _fns
        still, self._orphans = self._orphans, []
        for x, keep in still:
            if f.hetcclAgentCheckXfer(x) == IN_PROGRESS:
                self._orphans.append((x, keep))
            else:
                f.hetcclAgentReleaseXfer(x)

    # -- metadata and peers --

    def metadata(self) -> bytes:
        """The agent's metadata blob (how to reach it, what it registered, authenticated with the secret):
        give it to the peers. Lists the registrations live now: export it again after registering more."""
        f, h = _f(), self._live()
        n = ctypes.c_size_t(0)
        check(f.hetcclAgentGetMetadata(h, None, ctypes.byref(n)))
        for _ in range(16):  # a registration of another thread may grow it between the two calls
            cap = n.value
            buf = ctypes.create_string_buffer(max(1, cap))
            rc = f.hetcclAgentGetMetadata(h, buf, ctypes.byref(n))
            if rc == INVALID_ARGUMENT and n.value > cap:
                continue
            check(rc)
            return buf.raw[:n.value]
        raise InvalidUsageError("metadata: the blob kept growing (registrations of other threads)", 5)

    def load_remote(self, blob) -> str:
        """Loads a peer's metadata blob; returns the peer's name. InvalidArgumentError (saying which check
        failed) for anything but a genuine blob of this deployment's agents (another secret, altered, this
        agent's own, older than the one loaded). A restarted peer's new blob replaces the old one."""
        f, h = _f(), self._live()
        b = _bytes(blob, "blob")
        name = ctypes.create_string_buffer(NAME_MAX + 1)
        check(f.hetcclAgentLoadRemote(h, b, len(b), name))
        return name.value.decode("ascii", errors="replace")

    def forget_remote(self, name: str):
        """Forgets peer `name` (its connection is closed, transfers running to it fail)."""
        check(_f().hetcclAgentForgetRemote(self._live(), _cstr(name, "name")))

    # -- registrations --

    def register(self, buffer, nbytes: int | None = None) -> AgentMemory:
        """Registers the memory of `buffer` (the whole of it, or its first `nbytes`): any object with the
        buffer protocol or __array_interface__ (NumPy), or with __dlpack__ / __cuda_array_interface__ (device
        memory of this agent's device). It must be writable (peers may write into it). The registration keeps
        the buffer alive until deregister() or close(). Export metadata() again for the peers to see it."""
        return AgentMemory(self, buffer, nbytes)

    # -- transfers --

    strided_ranges = staticmethod(strided_ranges)

    def prep_xfer(self, op, peer: str, ranges, notif=b"") -> Xfer:
        """Prepares a read ("read", READ: peer -> local) or write ("write", WRITE: local -> peer) of `ranges`
        with peer `peer` (loaded), followed by notification `notif` (bytes, <= 4096; b"": none). ranges:
        5-tuples (local_region, remote_region, local_offset, remote_offset, bytes), an (n, 5) integer array,
        a 1-D array of range_dtype() (given to C without a copy) or strided_ranges()'s result. Every range
        is checked against the local registration and the peer's blob. Moves nothing: post() does."""
        f, h = _f(), self._live()
        code = _op(op)
        cpeer = _cstr(peer, "peer")
        ptr, n, keep = _ranges(ranges)
        msg = _bytes(notif, "notif") if notif is not None else b""
        out = ctypes.c_void_p()
        self._reap()
        check(f.hetcclAgentPrepXfer(h, int(code), cpeer, ptr, n, msg if msg else None, len(msg), ctypes.byref(out)))
        del keep  # the library copied the ranges
        return Xfer(self, out.value, code, cpeer.decode(), n, msg)

    # -- notifications --

    def gen_notif(self, peer: str, msg=b""):
        """Sends notification `msg` (bytes, <= 4096) to `peer`, after the transfers posted to it before;
        returns once the peer received it (RemoteError when it did not within the timeout)."""
        f, h = _f(), self._live()
        m = _bytes(msg, "msg")
        check(f.hetcclAgentGenNotif(h, _cstr(peer, "peer"), m if m else None, len(m)))

    def get_notif(self):
        """Never blocks: (peer name, message bytes) of the oldest notification received, or None."""
        f, h = _f(), self._live()
        peer = ctypes.create_string_buffer(NAME_MAX + 1)
        n, got = ctypes.c_size_t(), ctypes.c_int()
        cap = _NOTIF_FIRST_CAPACITY
        for _ in range(8):
            buf = ctypes.create_string_buffer(cap)
            n.value, got.value = 0, 0
            rc = f.hetcclAgentGetNotif(h, peer, buf, cap, ctypes.byref(n), ctypes.byref(got))
            if rc == INVALID_ARGUMENT and n.value > cap:  # larger than the buffer: still queued, its size in n
                cap = n.value
                continue
            check(rc)
            if not got.value:
                return None
            return peer.value.decode("ascii", errors="replace"), buf.raw[:n.value]
        raise InvalidUsageError("get_notif: the notification's size kept changing", 5)

    def get_notifs(self):
        """Drains the notifications received: a list of (peer name, message bytes), oldest first."""
        out = []
        while True:
            m = self.get_notif()
            if m is None:
                return out
            out.append(m)

    # -- end --

    def close(self):
        """hetcclAgentDestroy: says goodbye to the peers, fails transfers still running, joins the agent's
        threads. Its registrations, transfers and buffers are released. Idempotent."""
        h, self._h = self._h, None
        if h is None:
            return
        rc = _f().hetcclAgentDestroy(h)
        for mem in list(self._mems.values()):
            mem._m = None
            mem._keep = mem.obj = None
        self._mems.clear()
        self._orphans = []
        self._zombies = []
        check(rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and _fns is not None:
            self._h = None
            try:
                _fns.hetcclAgentDestroy(h)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass
