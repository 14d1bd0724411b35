"""Errors become exceptions: the Python layer's checks (dtype, layout, sizes, devices) and the library's
(InvalidArgument with hetcclGetLastError's message); after either, the communicator is still usable."""


import numpy as np
import pytest

import hetccl
from hetccl import _dlpack
from dlpack_obj import DLObj


def still_works(comm):
    x = np.ones(3, np.float32)
    comm.all_reduce(x)
    assert (x == comm.size).all()


def test_error_classes():
    assert issubclass(hetccl.RemoteError, hetccl.HetcclError)
    assert issubclass(hetccl.InvalidArgumentError, ValueError)
    e = hetccl._errors.make_error(6, "rank 2 died")
    assert isinstance(e, hetccl.RemoteError) and e.result == 6 and e.result_name == "hetcclRemoteError"
    assert type(hetccl._errors.make_error(99, "x")) is hetccl.HetcclError


def test_non_contiguous(comm):
    x = np.zeros((4, 6), np.float32)
    with pytest.raises(hetccl.InvalidArgumentError, match="not contiguous"):
        comm.all_reduce(x[:, ::2])
    with pytest.raises(hetccl.InvalidArgumentError, match="not contiguous"):
        comm.all_reduce(x.T)
    with pytest.raises(hetccl.InvalidArgumentError, match="not contiguous"):
        comm.all_reduce(DLObj(np.zeros(8, np.float32), (4,), 2, 32, strides=(2,)))
    still_works(comm)


@pytest.mark.parametrize("dtype", [np.complex64, np.bool_, np.int16])
def test_dtype_not_reducible(comm, dtype):
    with pytest.raises(hetccl.InvalidArgumentError, match="cannot reduce"):
        comm.all_reduce(np.zeros(4, dtype))
    with pytest.raises(hetccl.InvalidArgumentError, match="cannot reduce"):
        comm.reduce_scatter(np.zeros(4 * comm.size, dtype), np.zeros(4, dtype))
    # but it moves
    x = np.zeros(4, dtype)
    comm.broadcast(x, 0)
    still_works(comm)


def test_sub_byte_dtype(comm):
    with pytest.raises(hetccl.InvalidArgumentError, match="whole bytes"):
        comm.broadcast(DLObj(np.zeros(4, np.uint8), (8,), 17, 4), 0)  # fp4


def test_dtype_mismatch(comm):
    with pytest.raises(hetccl.InvalidArgumentError, match="dtypes differ"):
        comm.all_reduce(np.zeros(4, np.float32), out=np.zeros(4, np.float64))
    with pytest.raises(hetccl.InvalidArgumentError, match="dtypes differ"):
        comm.all_gather(np.zeros(4, np.int32), np.zeros(4 * comm.size, np.int64))


def test_wrong_sizes(comm):
    with pytest.raises(hetccl.InvalidArgumentError, match="out has"):
        comm.all_reduce(np.zeros(4), out=np.zeros(5))
    with pytest.raises(hetccl.InvalidArgumentError, match="all_gather: out has"):
        comm.all_gather(np.zeros(4), np.zeros(4 * comm.size + 1))
    with pytest.raises(hetccl.InvalidArgumentError, match="reduce_scatter"):
        comm.reduce_scatter(np.zeros(4 * comm.size), np.zeros(3))
    if comm.size > 1:
        with pytest.raises(hetccl.InvalidArgumentError, match="not a multiple"):
            comm.reduce_scatter(np.zeros(comm.size * 4 + 1))
        with pytest.raises(hetccl.InvalidArgumentError, match="not a multiple"):
            comm.all_to_all(np.zeros(comm.size * 4 + 1), np.zeros(comm.size * 4 + 1))
    with pytest.raises(hetccl.InvalidArgumentError, match="one per rank"):
        comm.all_to_allv(np.zeros(4), [1] * (comm.size + 1), np.zeros(4), [1] * comm.size)
    with pytest.raises(hetccl.InvalidArgumentError, match="runs past the end of send"):
        comm.all_to_allv(np.zeros(2), [3] * comm.size, np.zeros(3 * comm.size), [3] * comm.size)
    with pytest.raises(hetccl.InvalidArgumentError, match="runs past the end of out"):
        comm.all_to_allv(np.zeros(comm.size), [1] * comm.size, np.zeros(comm.size - 1), [1] * comm.size)
    still_works(comm)


def test_library_errors_carry_the_message(comm):
    """Validation failures of the C library: InvalidArgumentError with hetcclGetLastError's text."""
    with pytest.raises(hetccl.InvalidArgumentError) as ei:
        comm.broadcast(np.zeros(4), root=comm.size + 3)
    assert ei.value.result == 4 and str(ei.value)  # the library's message, not just the code
    assert "root" in str(ei.value).lower() or "rank" in str(ei.value).lower(), str(ei.value)
    with pytest.raises(hetccl.InvalidArgumentError, match="operator"):
        comm.all_reduce(np.zeros(4, np.float32), op=42)
    with pytest.raises(hetccl.InvalidArgumentError, match="op="):
        comm.all_reduce(np.zeros(4, np.float32), op="median")
    with pytest.raises(hetccl.InvalidArgumentError):
        comm.send(np.zeros(4), peer=comm.size)
    still_works(comm)


def test_barrier_inside_group_is_invalid_usage(comm):
    with pytest.raises(hetccl.InvalidUsageError):
        with hetccl.group():
            comm.barrier()
    still_works(comm)


def test_read_only(comm):
    ro = np.zeros(4, np.float32)
    ro.setflags(write=False)
    with pytest.raises(hetccl.InvalidArgumentError, match="DLPack|read-only"):
        comm.all_reduce(ro)
    obj = DLObj(np.zeros(4, np.float32), (4,), 2, 32, versioned=True, readonly=True)
    with pytest.raises(hetccl.InvalidArgumentError, match="read-only"):
        comm.all_reduce(obj)
    # a read-only buffer is fine where the call only reads it
    out = np.zeros(4 * comm.size, np.float32)
    comm.all_gather(obj, out)
    with pytest.raises(hetccl.InvalidArgumentError, match="read-only"):
        comm.recv(b"abcd", 0)


def test_not_a_buffer(comm):
    with pytest.raises(hetccl.InvalidArgumentError, match="neither __dlpack__"):
        comm.all_reduce([1.0, 2.0])


def test_unsupported_device(comm):
    obj = DLObj(np.zeros(4, np.float32), (4,), 2, 32, device=(7, 0))  # kDLVulkan
    with pytest.raises(hetccl.InvalidArgumentError, match="kDLVulkan"):
        comm.all_reduce(obj)


def test_gpu_buffer_on_cpu_rank(comm):
    """A kDLCUDA buffer on a CPU rank is refused before the library sees the pointer; the producer was
    asked for a stream (the default stream: 1 = legacy default per the DLPack protocol)."""
    if comm.device >= 0:
        pytest.skip("this rank is a GPU rank (test_gpu_torch.py covers device buffers)")
    obj = DLObj(np.zeros(4, np.float32), (4,), 2, 32, device=(2, 0))
    with pytest.raises(hetccl.InvalidUsageError, match="CPU rank"):
        comm.all_reduce(obj)
    assert obj.streams == [1]
    obj2 = DLObj(np.zeros(4, np.float32), (4,), 2, 32, device=(2, 0))
    with pytest.raises(hetccl.InvalidUsageError):
        comm.all_reduce(obj2, stream=0x1234)
    assert obj2.streams == [0x1234]
    rocm = DLObj(np.zeros(4, np.float32), (4,), 2, 32, device=(10, 0))
    with pytest.raises(hetccl.InvalidUsageError):
        comm.all_reduce(rocm)
    assert rocm.streams == [0]  # ROCm: 0 is the default stream


def test_stream_arguments():
    class TorchLikeStream:
        cuda_stream = 0xABC

    class CudaStreamProtocol:
        def __cuda_stream__(self):
            return (0, 0xDEF)

    class CupyLikeStream:
        ptr = 0x123

    assert _dlpack.stream_handle(None) is None
    assert _dlpack.stream_handle(77) == 77
    assert _dlpack.stream_handle(TorchLikeStream()) == 0xABC
    assert _dlpack.stream_handle(CudaStreamProtocol()) == 0xDEF
    assert _dlpack.stream_handle(CupyLikeStream()) == 0x123
    with pytest.raises(hetccl.InvalidArgumentError, match="stream="):
        _dlpack.stream_handle("default")
    # the export passes the explicit stream to the producer and reports it for the C call
    obj = DLObj(np.zeros(4, np.float32), (4,), 2, 32, device=(2, 0))
    v = _dlpack.export(obj, TorchLikeStream())
    assert obj.streams == [0xABC] and v[_dlpack.STREAM] == 0xABC and v[_dlpack.DEV_TYPE] == 2


def test_closed_communicator():
    c = hetccl.Communicator(hetccl.get_unique_id(), 1, 0)
    c.destroy()
    c.destroy()  # idempotent
    with pytest.raises(hetccl.InvalidUsageError, match="destroyed"):
        c.all_reduce(np.zeros(2))
    c2 = hetccl.Communicator(hetccl.get_unique_id(), 1, 0)
    c2.abort()
    with pytest.raises(hetccl.InvalidUsageError):
        c2.barrier()


def test_context_manager_finalizes():
    with hetccl.Communicator(hetccl.get_unique_id(), 1, 0) as c:
        x = np.ones(2)
        c.all_reduce(x)
    assert c._h is None
    with pytest.raises(RuntimeError, match="boom"):
        with hetccl.Communicator(hetccl.get_unique_id(), 1, 0) as c3:
            raise RuntimeError("boom")  # aborted, not finalized
    assert c3._h is None


def test_bad_unique_id():
    with pytest.raises(hetccl.InvalidArgumentError, match="128 bytes"):
        hetccl.Communicator(b"short", 1, 0)
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Communicator(bytes(128), 1, 0)  # the library rejects a zero id
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Communicator(hetccl.get_unique_id(), 1, 5)  # rank out of range
