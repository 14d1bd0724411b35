"""Every collective and send/recv on host buffers, across dtypes and ops, in place and out of place, on
NumPy arrays, a non-NumPy DLPack producer and buffer-protocol objects. Runs on every rank of the job
(or on 1 rank alone)."""

import numpy as np
import pytest

import hetccl
from dlpack_obj import FP8_E4M3, FP8_E5M2, DLObj, bf16_bits, bf16_values

NUMPY_TYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64]
OPS = ["sum", "prod", "max", "min", "avg"]
N = 37


def contribution(rank, n=N, dtype=np.float64):
    """Small positive values, different per rank and element; products of 3 ranks fit int8."""
    i = np.arange(n)
    return ((rank * 3 + i) % 4 + 1).astype(dtype)


def expected(size, op, dtype, n=N):
    stack = np.stack([contribution(r, n, np.float64) for r in range(size)])
    if op == "sum":
        e = stack.sum(0)
    elif op == "prod":
        e = stack.prod(0)
    elif op == "max":
        e = stack.max(0)
    elif op == "min":
        e = stack.min(0)
    else:
        e = stack.sum(0) / size
        if np.issubdtype(dtype, np.integer):
            e = np.floor(e)
    return e.astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", OPS)
def test_all_reduce_in_place(comm, dtype, op):
    x = contribution(comm.rank, N, dtype)
    before = x.ctypes.data
    out = comm.all_reduce(x, op)
    assert out is x and x.ctypes.data == before  # in place, same object, same memory
    np.testing.assert_array_equal(x, expected(comm.size, op, dtype))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_all_reduce_out_of_place(comm, dtype):
    x = contribution(comm.rank, N, dtype)
    keep = x.copy()
    y = np.zeros(N, dtype)
    assert comm.all_reduce(x, hetccl.SUM, out=y) is y
    np.testing.assert_array_equal(x, keep)  # input untouched
    np.testing.assert_array_equal(y, expected(comm.size, "sum", dtype))


def test_all_reduce_op_spellings(comm):
    for op in (hetccl.MAX, hetccl.ReduceOp.MAX, 2, "max", "MAX"):
        x = contribution(comm.rank, N, np.int32)
        comm.all_reduce(x, op)
        np.testing.assert_array_equal(x, expected(comm.size, "max", np.int32))


def test_all_reduce_multidimensional_and_slice(comm):
    # a contiguous 2-D array, and a contiguous slice of a larger array: only the slice changes
    x = np.arange(12, dtype=np.float32).reshape(3, 4) + comm.rank
    comm.all_reduce(x)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(x, base * comm.size + sum(range(comm.size)))
    big = np.full(20, -1.0, np.float64)
    big[5:15] = comm.rank + 1
    comm.all_reduce(big[5:15])
    assert (big[:5] == -1).all() and (big[15:] == -1).all()
    assert (big[5:15] == sum(r + 1 for r in range(comm.size))).all()


def test_all_reduce_zero_and_one_element(comm):
    z = np.zeros(0, np.float32)
    assert comm.all_reduce(z) is z
    one = np.array(comm.rank + 1.0)  # 0-d
    comm.all_reduce(one)
    assert one == sum(r + 1 for r in range(comm.size))


@pytest.mark.parametrize("kind", ["bfloat16", "float8_e4m3", "float8_e5m2"])
def test_all_reduce_non_numpy_dtypes(comm, kind):
    """bf16 and fp8 buffers through the ctypes DLPack producer (NumPy has no such dtypes)."""
    n = 8
    if kind == "bfloat16":
        storage = bf16_bits(np.full(n, comm.rank + 1.0))
        obj = DLObj(storage, (n,), 4, 16)
        comm.all_reduce(obj)
        np.testing.assert_array_equal(bf16_values(storage), np.full(n, sum(r + 1 for r in range(comm.size))))
    else:
        table, code = (FP8_E4M3, 10) if kind == "float8_e4m3" else (FP8_E5M2, 12)
        storage = np.full(n, table[1], np.uint8)
        obj = DLObj(storage, (n,), code, 8)
        comm.all_reduce(obj)  # sum of 1.0 over ranks
        assert (storage == table[comm.size]).all()
    assert obj.released == obj.exported == 1  # the capsule was released after the call


@pytest.mark.parametrize("root_of", [lambda s: 0, lambda s: s - 1])
def test_broadcast(comm, root_of):
    root = root_of(comm.size)
    x = np.arange(N, dtype=np.int64) * (7 if comm.rank == root else 0) - comm.rank
    assert comm.broadcast(x, root) is x
    np.testing.assert_array_equal(x, np.arange(N) * 7 - root)
    src = np.full(N, comm.rank, np.float32)
    out = np.zeros(N, np.float32)
    comm.broadcast(src, root, out=out)
    assert (out == root).all() and (src == comm.rank).all()


def test_broadcast_every_root(comm):
    for root in range(comm.size):
        x = np.full(5, comm.rank * 10, np.int32)
        comm.broadcast(x, root=root)
        assert (x == root * 10).all()


@pytest.mark.parametrize("op", ["sum", "max"])
def test_reduce_every_root(comm, op):
    for root in range(comm.size):
        x = contribution(comm.rank, N, np.float32)
        mine = x.copy()
        comm.reduce(x, root, op)
        if comm.rank == root:
            np.testing.assert_array_equal(x, expected(comm.size, op, np.float32))
        else:
            np.testing.assert_array_equal(x, mine)  # only the root's buffer is written
        y = np.full(N, -5, np.float32)
        comm.reduce(mine, root, op, out=y)
        if comm.rank == root:
            np.testing.assert_array_equal(y, expected(comm.size, op, np.float32))
        else:
            assert (y == -5).all()


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float16, np.float64])
def test_all_gather(comm, dtype):
    send = np.full(N, comm.rank + 1, dtype)
    out = np.zeros(N * comm.size, dtype)
    assert comm.all_gather(send, out) is out
    np.testing.assert_array_equal(out, np.repeat(np.arange(1, comm.size + 1), N).astype(dtype))


def test_all_gather_in_place_2d(comm):
    out = np.zeros((comm.size, 6), np.float32)
    out[comm.rank] = comm.rank + 0.5
    comm.all_gather(None, out)  # this rank's row is its input
    np.testing.assert_array_equal(out, np.repeat(np.arange(comm.size) + 0.5, 6).reshape(comm.size, 6))


@pytest.mark.parametrize("op", ["sum", "min"])
def test_reduce_scatter(comm, op):
    send = np.concatenate([contribution(comm.rank, N, np.float64) + b for b in range(comm.size)])
    out = np.zeros(N, np.float64)
    assert comm.reduce_scatter(send, out, op) is out
    exp = expected(comm.size, op, np.float64) + (comm.rank if op == "min" else comm.rank * comm.size)
    np.testing.assert_array_equal(out, exp)


def test_reduce_scatter_in_place(comm):
    send = np.tile(np.arange(4, dtype=np.int32), comm.size) + comm.rank
    block = comm.reduce_scatter(send)
    exp = np.arange(4) * comm.size + sum(range(comm.size))
    np.testing.assert_array_equal(send[comm.rank * 4:(comm.rank + 1) * 4], exp)
    np.testing.assert_array_equal(block, exp)  # the returned view is that block


def test_all_to_all(comm):
    k = 5
    send = np.array([[comm.rank * 100 + p * 10 + i for i in range(k)] for p in range(comm.size)], np.int32)
    out = np.zeros_like(send)
    comm.all_to_all(send, out)
    exp = np.array([[p * 100 + comm.rank * 10 + i for i in range(k)] for p in range(comm.size)], np.int32)
    np.testing.assert_array_equal(out, exp)


def test_all_to_allv_uneven(comm):
    """rank r sends (r + 2p) % 3 + p elements to rank p (some zero), packed and with explicit gaps."""
    def count(src, dst):
        return (src + 2 * dst) % 3 + dst

    sc = [count(comm.rank, p) for p in range(comm.size)]
    rcnt = [count(p, comm.rank) for p in range(comm.size)]
    send = np.concatenate([np.full(c, comm.rank * 1000 + p, np.float32) for p, c in enumerate(sc)] or [np.zeros(0)])
    send = send.astype(np.float32)
    out = np.full(sum(rcnt), -1, np.float32)
    comm.all_to_allv(send, sc, out, rcnt)
    exp = np.concatenate([np.full(c, p * 1000 + comm.rank, np.float32) for p, c in enumerate(rcnt)]).astype(np.float32)
    np.testing.assert_array_equal(out, exp)
    # explicit displacements with a gap of 2 elements before every block on the receive side
    rd = [sum(rcnt[:p]) + 2 * (p + 1) for p in range(comm.size)]
    out2 = np.full(sum(rcnt) + 2 * comm.size, -1, np.float32)
    comm.all_to_allv(send, sc, out2, rcnt, recv_displs=rd)
    for p in range(comm.size):
        assert (out2[rd[p]:rd[p] + rcnt[p]] == p * 1000 + comm.rank).all()
        assert (out2[rd[p] - 2:rd[p]] == -1).all()


def test_all_to_allv_bytes_dtype(comm):
    """complex64 cannot be reduced but moves (as bytes)."""
    sc = [2] * comm.size
    send = (np.arange(2 * comm.size) + 1j * comm.rank).astype(np.complex64)
    out = np.zeros(2 * comm.size, np.complex64)
    comm.all_to_allv(send, sc, out, sc)
    exp = np.concatenate([(np.arange(2) + 2 * comm.rank + 1j * p) for p in range(comm.size)]).astype(np.complex64)
    np.testing.assert_array_equal(out, exp)


def needs_peers(comm):
    if comm.size < 2:
        pytest.skip("needs 2+ ranks (run under hetccl-run)")


def test_send_recv_ring_in_group(comm):
    needs_peers(comm)
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    send = np.full(N, comm.rank, np.int64)
    recv = np.zeros(N, np.int64)
    with hetccl.group():
        comm.send(send, right)
        comm.recv(recv, left)
    assert (recv == left).all()


def test_group_keeps_temporaries_alive(comm):
    """Buffers passed inside a group are only used at its end: temporaries must survive until then."""
    needs_peers(comm)
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    recv = np.zeros(1 << 16, np.float32)
    with comm.group():
        comm.send(np.full(1 << 16, comm.rank + 0.25, np.float32), right)  # no other reference
        comm.recv(recv, left)
    assert (recv == left + 0.25).all()


def test_group_of_collectives_and_nesting(comm):
    a = np.full(4, comm.rank + 1, np.int32)
    b = np.full(3, comm.rank, np.float64)
    with hetccl.group():
        comm.all_reduce(a)
        with hetccl.group():
            comm.broadcast(b, root=0)
    assert (a == sum(r + 1 for r in range(comm.size))).all()
    assert (b == 0).all()


def test_send_recv_pairs_without_group(comm):
    needs_peers(comm)
    # rank 0 sends to every rank in turn, the others receive: blocking calls that match one by one
    for peer in range(1, comm.size):
        if comm.rank == 0:
            comm.send(np.full(3, peer, np.uint8), peer)
        elif comm.rank == peer:
            buf = np.zeros(3, np.uint8)
            comm.recv(buf, 0)
            assert (buf == peer).all()


def test_bytes_helpers(comm):
    needs_peers(comm)
    msg = comm.broadcast_bytes(b"descriptor-" + bytes([7] * 100) if comm.rank == 0 else None, root=0)
    assert msg == b"descriptor-" + bytes([7] * 100)
    if comm.rank == 0:
        comm.send_bytes(b"to one", 1)
    elif comm.rank == 1:
        assert comm.recv_bytes(0) == b"to one"


def test_barrier(comm):
    comm.barrier()
    comm.barrier()


def test_buffer_protocol_objects(comm):
    import array

    a = array.array("i", [comm.rank + 1] * 6)
    comm.all_reduce(a)
    assert list(a) == [sum(r + 1 for r in range(comm.size))] * 6
    ba = bytearray([comm.rank] * 4) if comm.rank == 0 else bytearray(4)
    comm.broadcast(ba, 0)
    assert ba == bytearray([0] * 4)
    mv = memoryview(bytearray(16)).cast("d")
    mv[0], mv[1] = 1.5, float(comm.rank)
    comm.all_reduce(mv, "max")
    assert mv[0] == 1.5 and mv[1] == comm.size - 1


def test_dlpack_producer_legacy_and_versioned(comm):
    for versioned in (False, True):
        storage = np.full(10, comm.rank + 1, np.int64)
        obj = DLObj(storage, (2, 5), 0, 64, versioned=versioned)
        assert comm.all_reduce(obj) is obj
        assert (storage == sum(r + 1 for r in range(comm.size))).all()
        assert obj.streams == [None]  # host memory: no stream passed to the producer
        assert obj.released == 1


def test_dlpack_byte_offset_and_broadcastable_strides(comm):
    storage = np.zeros(16, np.float32)
    storage[4:10] = comm.rank + 1
    # byte_offset 16 = element 4; shape (1, 6) with a bogus stride on the size-1 dimension (allowed)
    obj = DLObj(storage, (1, 6), 2, 32, byte_offset=16, strides=(999, 1))
    comm.all_reduce(obj)
    assert (storage[4:10] == sum(r + 1 for r in range(comm.size))).all()
    assert (storage[:4] == 0).all() and (storage[10:] == 0).all()


def test_split(comm):
    sub = comm.split(comm.rank % 2, key=-comm.rank)  # reversed order inside each color
    try:
        members = [r for r in range(comm.size) if r % 2 == comm.rank % 2]
        assert sub.size == len(members)
        assert sub.rank == len(members) - 1 - members.index(comm.rank)
        x = np.full(3, comm.rank, np.int32)
        sub.all_reduce(x)
        assert (x == sum(members)).all()
    finally:
        sub.destroy()
    none = comm.split(hetccl.SPLIT_NOCOLOR if comm.rank == 0 else 0)
    if comm.rank == 0:
        assert none is None
    else:
        assert none.size == comm.size - 1
        none.destroy()


def test_premul_sum(comm):
    x = np.full(4, 2.0, np.float32)
    with comm.premul_sum(comm.rank + 1, hetccl.DataType.float32) as op:
        comm.all_reduce(x, op)
    assert (x == 2.0 * sum(r + 1 for r in range(comm.size))).all()


def test_properties(comm):
    assert 0 <= comm.rank < comm.size
    assert comm.device >= -1  # -1: a CPU rank (CI); a GPU rank's ordinal on a machine with torch and a GPU
    assert comm.async_error() is None
    assert "Communicator rank" in repr(comm)
    if hetccl.launched():
        env = hetccl.launch_env()
        assert (comm.rank, comm.size) == (env.rank, env.size)
