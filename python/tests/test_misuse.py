"""Misuse is never silent (issues 27 and 28): buffers the call cannot reduce, an op where a root goes,
integers C would wrap. Each raises before the library sees the call, on every rank alike, and the
communicator stays usable. Cost: a few small collectives per test (milliseconds)."""

import numpy as np
import pytest

import hetccl


def still_works(comm):
    x = np.ones(3, np.float32)
    comm.all_reduce(x)
    assert (x == comm.size).all()


# ---- buffer formats (issue 28: an object array segfaulted, records and complex came back as ~1e37) ----

def test_object_arrays_are_refused_everywhere(comm):
    for obj in (np.array([1, "a", None] * 2, dtype=object), np.zeros(4, dtype=[("a", "i4"), ("b", "O")])):
        with pytest.raises(TypeError, match="'O'|Python objects"):
            comm.all_reduce(obj)
        with pytest.raises(hetccl.DtypeError, match="Python objects"):
            comm.broadcast(obj, 0)  # moving pointers into another process is garbage too
    still_works(comm)


@pytest.mark.parametrize("make", [
    lambda r: np.full(6, r + 1, dtype=[("a", "<i4"), ("b", "<f8")]),         # a structured array (records)
    lambda r: memoryview(np.full(6, r + 1j, np.complex64)),                  # a memoryview of complex values
    lambda r: memoryview(np.full(6, r + 1j, np.complex128)),
    lambda r: np.full(6, r + 1, np.longdouble),                              # no DLPack type at all
], ids=["record", "complex64_memoryview", "complex128_memoryview", "longdouble"])
def test_unreducible_formats_are_refused_naming_the_format_and_move_as_bytes(comm, make):
    x = make(comm.rank)
    for call in (lambda: comm.all_reduce(x), lambda: comm.reduce(x, 0), lambda: comm.reduce_scatter(x)):
        with pytest.raises(TypeError, match=r"dtype (buffer format '[^']+'|complex(64|128)), which hetccl cannot "
                                            "reduce"):
            call()
    assert (np.asarray(x) == np.asarray(make(comm.rank))).all()  # untouched
    comm.broadcast(x, 0)  # moves as bytes: every rank gets rank 0's values
    assert (np.asarray(x) == np.asarray(make(0))).all()
    still_works(comm)


# ---- an op where a root goes (issue 28: reduce(x, MAX) ran a SUM to rank 2, broadcast(x, PROD) used rank 1) ----

def test_op_in_place_of_root_or_peer_is_refused(comm):
    x = np.full(4, comm.rank + 1.0, np.float32)
    for call in (lambda: comm.reduce(x, hetccl.MAX), lambda: comm.reduce(x, "max"),
                 lambda: comm.broadcast(x, hetccl.PROD), lambda: comm.broadcast(x, root=hetccl.SUM),
                 lambda: comm.broadcast_bytes(b"x", hetccl.MIN), lambda: comm.send(x, hetccl.MAX),
                 lambda: comm.recv(x, hetccl.AVG)):
        with pytest.raises(TypeError, match="is a reduction op, not a rank"):
            call()
    with pytest.raises(TypeError, match="must be a rank"):
        comm.broadcast(x, 0.0)
    assert (x == comm.rank + 1.0).all()  # nothing ran
    # the documented positional forms still work: reduce(buf, root, op), broadcast(buf, root)
    comm.reduce(x, 0, hetccl.MAX)
    if comm.rank == 0:
        assert (x == comm.size).all()
    comm.broadcast(x, comm.size - 1)
    assert (x == comm.size).all()
    still_works(comm)
