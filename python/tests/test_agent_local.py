"""hetccl.Agent within this process, no peer: the arguments the constructor refuses (names, secrets), what
register takes (NumPy arrays, a part of one, bytearrays, an object with only __array_interface__, another
DLPack producer; a registration keeps its buffer alive until deregistered) and refuses (non-contiguous,
read-only), the calls refused without a peer, a closed agent; and every form of `ranges` (tuples, uint64
arrays, range_dtype and other structured arrays, Agent.strided_ranges) giving the same hetcclAgentRange_t
bytes; negative values, values over a field's width and rows of other than 5 fields refused; a prepared
notification between two agents of this process (posted without blocking, twice).

The agents between processes, with data, are test_agent.py's. Cost: well under a second (one agent, no child
process).
"""

import ctypes
import os
import struct
import time

import numpy as np
import pytest

import hetccl
from dlpack_obj import DLObj

pytestmark = pytest.mark.skipif(not hetccl.agent_available(),
                                reason="the loaded libhetccl does not export the agent API of hetccl_agent.h")


def test_prepared_notification():
    key = os.urandom(32)
    with hetccl.Agent("notif-a", secret=key, listen="127.0.0.1:0", timeout=10) as a, \
            hetccl.Agent("notif-b", secret=key, listen="127.0.0.1:0", timeout=10) as b:
        with pytest.raises(hetccl.InvalidArgumentError):
            a.prep_notif("notif-b", b"x")  # not loaded yet
        assert a.load_remote(b.metadata()) == "notif-b"
        with pytest.raises(hetccl.InvalidArgumentError):
            a.prep_notif("notif-b", b"x" * 4097)
        x = a.prep_notif("notif-b", b"free request 7")
        assert "notify" in repr(x)
        for _ in range(2):  # a prepared notification is posted any number of times
            x.post()
            x.wait()
            assert x.check() is True
            got = None
            for _ in range(500):
                got = b.get_notif()
                if got:
                    break
                time.sleep(0.002)
            assert got == ("notif-a", b"free request 7")
        x.release()


def test_local_api(monkeypatch):
    import gc
    import weakref

    key = os.urandom(32)
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Agent("bad name!", secret=key)
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Agent("x" * 64, secret=key)
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Agent("short", secret=b"0123456789")
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Agent("nothex", secret="zz" * 20)
    with pytest.raises(hetccl.InvalidArgumentError):
        hetccl.Agent("shorthex", secret="ab" * 15)
    ag = hetccl.Agent("local.agent-1:x", secret=key.hex(), listen="127.0.0.1:0", timeout=5)
    with ag:
        assert ag.name == "local.agent-1:x"
        blob = ag.metadata()
        assert isinstance(blob, bytes) and blob
        buf = np.zeros(1000, np.uint8)
        alive = weakref.ref(buf)
        m = ag.register(buf)
        assert (m.kind, m.nbytes) == ("host", 1000) and isinstance(m.id, int)
        del buf
        gc.collect()
        assert alive() is not None, "the registration does not keep its buffer alive"
        part = ag.register(np.zeros(64, np.float32), nbytes=10)
        assert part.nbytes == 10 and part.id != m.id
        assert ag.register(bytearray(100)).nbytes == 100

        class OnlyInterface:  # __array_interface__ and nothing else
            def __init__(self, a):
                self.a = a
                self.__array_interface__ = a.__array_interface__

        assert ag.register(OnlyInterface(np.zeros(24, np.uint8))).nbytes == 24
        obj = DLObj(np.zeros(64, np.uint8), (64,), 1, 8)  # another DLPack producer: kept while registered
        dm = ag.register(obj)
        assert dm.nbytes == 64 and obj.exported == 1 and obj.released == 0
        dm.deregister()
        assert obj.released == 1
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.register(np.zeros((8, 8), np.uint8)[:, ::2])
        ro = np.zeros(16, np.uint8)
        ro.flags.writeable = False
        with pytest.raises(hetccl.InvalidArgumentError, match="read-only"):
            ag.register(ro)
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.register(b"bytes are read-only")
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.load_remote(ag.metadata())  # its own
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.prep_xfer("write", "nobody", [(m.id, 0, 0, 0, 8)])
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.prep_xfer("copy", "nobody", [(m.id, 0, 0, 0, 8)])
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.gen_notif("nobody", b"x")
        with pytest.raises(hetccl.InvalidArgumentError):
            ag.forget_remote("nobody")
        assert ag.get_notifs() == [] and ag.get_notif() is None
        assert len(ag.metadata()) > len(blob)  # lists the registrations made since
        m.deregister()
        m.deregister()  # idempotent
        gc.collect()
        assert alive() is None, "the deregistered buffer is still kept alive"
    ag.close()  # idempotent
    with pytest.raises(hetccl.InvalidUsageError):
        ag.metadata()
    with pytest.raises(hetccl.InvalidUsageError):
        ag.register(np.zeros(8, np.uint8))


def test_ranges_forms():
    """Every form of `ranges` gives the same hetcclAgentRange_t bytes; a range_dtype array goes to C as it is."""
    from hetccl._agent_ranges import _ranges

    rows = [(1, 2, 3, 4, 5), (6, 7, (1 << 64) - 1, 9, 10), (0xFFFFFFFF, 0, 0, 1 << 40, 1)]
    raw = b"".join(struct.pack("<IIQQQ", *r) for r in rows)

    def as_bytes(r):
        p, n, keep = _ranges(r)
        return n, bytes((ctypes.c_char * (32 * n)).from_address(p))

    assert as_bytes(rows) == (3, raw)
    assert as_bytes(np.array(rows, np.uint64)) == (3, raw)
    s = np.zeros(3, hetccl.range_dtype())
    for k, f in enumerate(s.dtype.names):
        s[f] = [r[k] for r in rows]
    assert s.tobytes() == raw and s.itemsize == 32
    assert as_bytes(s) == (3, raw) and _ranges(s)[0] == s.ctypes.data  # zero-copy
    other = np.zeros(3, [("a", "<u8"), ("b", "<u8"), ("c", "<u8"), ("d", "<u8"), ("e", "<u8")])
    for k, f in enumerate(other.dtype.names):
        other[f] = [r[k] for r in rows]
    assert as_bytes(other) == (3, raw)
    st = hetccl.Agent.strided_ranges(3, 1, 10, 100, 2, 20, 200, 7)
    assert bytes(st) == b"".join(struct.pack("<IIQQQ", 1, 2, 10 + i * 100, 20 + i * 200, 7) for i in range(3))
    assert as_bytes(st)[1] == bytes(st)
    v = np.frombuffer(st, hetccl.range_dtype())
    assert v["remoteOffset"].tolist() == [20, 220, 420]
    with pytest.raises(hetccl.InvalidArgumentError):
        _ranges([(1, 2, 3, -4, 5)])
    with pytest.raises(hetccl.InvalidArgumentError):
        _ranges(np.array([(1, 2, 3, -4, 5)], np.int64))
    with pytest.raises(hetccl.ArgumentOverflowError):
        _ranges([(1 << 32, 2, 3, 4, 5)])
    with pytest.raises(hetccl.ArgumentOverflowError):
        _ranges(np.array([(1 << 32, 2, 3, 4, 5)], np.uint64))
    with pytest.raises(hetccl.InvalidArgumentError):
        _ranges([(1, 2, 3, 4)])
    with pytest.raises(hetccl.InvalidArgumentError):
        _ranges(np.zeros((2, 4), np.uint64))
