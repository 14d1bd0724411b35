"""hetccl.launch_env(): the launchers' variables read as tools/common/launch_env.cc reads them."""

import hashlib
import hmac
import struct

import pytest

import hetccl
from hetccl import _launch

SECRET = "00112233445566778899AABBCCDDEEFF"


def decode(uid):
    magic, version, flags = struct.unpack_from("<IHH", uid)
    family, port = uid[8], struct.unpack_from("<H", uid, 10)[0]
    return magic, version, flags, family, uid[12:16], port, uid[28:60], uid[60:]


def test_hetccl_run():
    uid = hetccl.get_unique_id()
    e = hetccl.launch_env({"HETCCL_RANK": "1", "HETCCL_NRANKS": "3", "HETCCL_LOCAL_RANK": "1",
                           "HETCCL_LOCAL_SIZE": "3", "HETCCL_UNIQUE_ID": uid.hex()})
    assert (e.rank, e.size, e.local_rank, e.local_size, e.unique_id, e.source) == (1, 3, 1, 3, uid, "hetccl-run")


def test_torchrun_id_layout():
    e = hetccl.launch_env({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2",
                           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "HETCCL_SECRET": SECRET})
    magic, version, flags, family, addr, port, secret, reserved = decode(e.unique_id)
    assert magic == 0x44494348 and version == 1 and flags == 1  # rank 0 starts the root
    assert family == 4 and addr == bytes([127, 0, 0, 1]) and port == 29501  # MASTER_PORT + 1
    # the secret: HMAC-SHA256 under a zero key of the label and the lower-cased HETCCL_SECRET
    assert secret == hmac.new(bytes(32), b"hetccl launcher secret v1" + SECRET.lower().encode(),
                              hashlib.sha256).digest()
    assert reserved == bytes(68) and len(e.unique_id) == 128 and e.source == "torchrun"
    # the case of the secret does not matter
    e2 = hetccl.launch_env({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "HETCCL_SECRET": SECRET.lower()})
    assert e2.unique_id == e.unique_id


def test_ipv6_root():
    e = hetccl.launch_env({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1",
                           "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
                           "HETCCL_COMM_ID": "[::1]:4000", "HETCCL_SECRET": SECRET})
    assert e.unique_id[8] == 6 and e.unique_id[12:28] == bytes(15) + b"\x01" and e.source == "openmpi"


def test_nccl_comm_id_alias():
    e = hetccl.launch_env({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1",
                           "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
                           "NCCL_COMM_ID": "127.0.0.1:4000", "HETCCL_SECRET": SECRET})
    assert struct.unpack_from("<H", e.unique_id, 10)[0] == 4000


def test_slurm():
    env = {"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_NODEID": "2",
           "SLURM_STEP_TASKS_PER_NODE": "2(x3),1,1", "SLURM_STEP_NODELIST": "localhost,node[2-9]",
           "SLURM_JOB_ID": "123456", "HETCCL_SECRET": SECRET}
    e = hetccl.launch_env(env)
    assert (e.rank, e.size, e.local_rank, e.local_size, e.source) == (5, 8, 1, 2, "slurm")
    assert struct.unpack_from("<H", e.unique_id, 10)[0] == 15000 + 123456 % 15000


def test_slurm_lists():
    assert _launch.first_host_of_node_list("L", "node[01-04,07],gpu5") == "node01"
    assert _launch.first_host_of_node_list("L", "a,b") == "a"
    assert _launch.first_host_of_node_list("L", "rack[1-2]-n[3-4]") == "rack1-n3"
    assert _launch.tasks_on_node("T", "2(x3),1", 3) == 1
    assert _launch.tasks_on_node("T", "2(x3),1", 0) == 2
    with pytest.raises(hetccl.InvalidArgumentError, match="node index 9"):
        _launch.tasks_on_node("T", "2(x3),1", 9)
    with pytest.raises(hetccl.InvalidArgumentError, match="without"):
        _launch.first_host_of_node_list("L", "node[1-2")


@pytest.mark.parametrize("env,match", [
    ({}, "no launcher found"),
    ({"HETCCL_RANK": "0"}, "HETCCL_NRANKS is not set"),
    ({"HETCCL_RANK": "3", "HETCCL_NRANKS": "2", "HETCCL_LOCAL_RANK": "0", "HETCCL_LOCAL_SIZE": "1",
      "HETCCL_UNIQUE_ID": "00"}, "HETCCL_RANK=3 is not below HETCCL_NRANKS=2"),
    ({"HETCCL_RANK": "0", "HETCCL_NRANKS": "2", "HETCCL_LOCAL_RANK": "0", "HETCCL_LOCAL_SIZE": "1",
      "HETCCL_UNIQUE_ID": "zz"}, "HETCCL_UNIQUE_ID is not a unique id"),
    ({"RANK": "x1", "WORLD_SIZE": "2"}, "RANK='x1' is not a decimal integer"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h",
      "MASTER_PORT": "65535"}, "MASTER_PORT='65535' is outside"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
      "MASTER_PORT": "100"}, "HETCCL_SECRET is not set"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
      "MASTER_PORT": "100", "HETCCL_SECRET": "abc"}, "at least 32"),
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
      "OMPI_COMM_WORLD_LOCAL_SIZE": "1", "HETCCL_SECRET": SECRET}, "HETCCL_COMM_ID is not set"),
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
      "OMPI_COMM_WORLD_LOCAL_SIZE": "1", "HETCCL_SECRET": SECRET, "HETCCL_COMM_ID": "127.0.0.1:0"},
     "needs a fixed port"),
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0", "SLURM_NODEID": "0",
      "SLURM_TASKS_PER_NODE": "1", "HETCCL_SECRET": SECRET}, "SLURM_NODELIST is not set"),
])
def test_errors_name_the_variable(env, match):
    with pytest.raises(hetccl.InvalidArgumentError, match=match):
        hetccl.launch_env(env)


def test_torchrun_by_hand_learns_every_variable():
    """A torchrun-style launch by hand that missed LOCAL_RANK is told every variable such a launch needs."""
    with pytest.raises(hetccl.InvalidArgumentError) as e:
        hetccl.launch_env({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "100"})
    for name in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "HETCCL_SECRET"):
        assert name in str(e.value), (name, str(e.value))


def test_library_identity():
    import os

    assert hetccl.version() >= 100  # major*10000 + minor*100 + patch; 0.1.0 is 100
    path = hetccl.library_path()
    assert os.path.isabs(path) and os.path.exists(path)
    if os.environ.get("HETCCL_LIBRARY"):
        assert hetccl.library_source() == "HETCCL_LIBRARY"
        assert os.path.realpath(os.environ["HETCCL_LIBRARY"]) == path
    uid1, uid2 = hetccl.get_unique_id(), hetccl.get_unique_id()
    assert len(uid1) == 128 and uid1 != uid2


def _probe(env_changes):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("HETCCL_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(env_changes)
    code = "import hetccl; print(hetccl.library_source()); print(hetccl.library_path())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd="/")


def test_library_search_order():
    import os

    lib = hetccl.library_path()
    r = _probe({"HETCCL_LIBRARY": "/nonexistent/libhetccl.so"})  # set but unusable: an error, no fallback
    assert r.returncode != 0 and "HETCCL_LIBRARY" in r.stderr and "/nonexistent/libhetccl.so" in r.stderr, r.stderr
    r = _probe({"LD_LIBRARY_PATH": os.path.dirname(lib)})  # the loader's search path
    assert r.returncode == 0, r.stderr
    source, path = r.stdout.split("\n")[:2]
    if source != "bundled in the package":  # a bundled copy comes first
        assert source == "dynamic loader search path" and path == lib, r.stdout
