"""Communicator: the collectives, send/recv, groups and lifetime of include/hetccl/hetccl.h over DLPack."""

from __future__ import annotations

import ctypes
import enum
import os
import struct
import sys
import threading

from . import _lib
from ._dlpack import GPU_DEVICES, NO_TYPE, dtype_name, export
from ._errors import InvalidArgumentError, InvalidUsageError, make_error
from ._launch import LaunchEnv, launch_env


class DataType(enum.IntEnum):
    """hetcclDataType_t."""

    int8 = 0
    uint8 = 1
    int32 = 2
    uint32 = 3
    int64 = 4
    uint64 = 5
    float16 = 6
    float32 = 7
    float64 = 8
    bfloat16 = 9
    float8_e4m3 = 10
    float8_e5m2 = 11


class ReduceOp(enum.IntEnum):
    """hetcclRedOp_t (handles from Communicator.premul_sum are ints >= 5)."""

    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


SUM, PROD, MAX, MIN, AVG = ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.AVG
_OP_NAMES = {"sum": 0, "prod": 1, "max": 2, "min": 3, "avg": 4, "mean": 4}


_OP_CODES = {**{m: int(m) for m in ReduceOp}, **{int(m): int(m) for m in ReduceOp}, **_OP_NAMES}


def _op(op):
    try:
        code = _OP_CODES.get(op)
    except TypeError:  # unhashable
        code = None
    if code is not None:
        return code
    if isinstance(op, int):
        return int(op)
    if isinstance(op, str):
        try:
            return _OP_NAMES[op.lower()]
        except KeyError:
            pass
    if isinstance(op, PreMulSumOp):
        return op.handle
    raise InvalidArgumentError(f"op={op!r}: expected hetccl.SUM/PROD/MAX/MIN/AVG, one of {sorted(_OP_NAMES)} or a "
                               "PreMulSum op")


def _raise(rc, comm_handle):
    msg = _lib.fn.hetcclGetLastError(comm_handle)
    text = msg.decode(errors="replace") if msg else ""
    if not text:
        text = _lib.fn.hetcclGetErrorString(rc).decode(errors="replace")
    raise make_error(rc, text)


def check(rc, comm_handle=None):
    if rc:
        _raise(rc, comm_handle)


# ---- library ---------------------------------------------------------------------------------------

def version() -> int:
    """hetcclGetVersion: major*10000 + minor*100 + patch of the loaded library."""
    f = _lib.load()
    v = ctypes.c_int()
    check(f.hetcclGetVersion(ctypes.byref(v)))
    return v.value


def library_path() -> str:
    """Absolute path of the libhetccl.so this process loaded."""
    return _lib.library_path()


def library_source() -> str:
    """Which rule found it: HETCCL_LIBRARY, bundled in the package, dynamic loader search path, build tree."""
    return _lib.library_source()


def get_unique_id() -> bytes:
    """hetcclGetUniqueId: 128 bytes to give every rank (out of band); starts the rendezvous root in this
    process. Holds the job's secret: treat it as a credential."""
    f = _lib.load()
    uid = _lib.UniqueIdStruct()
    check(f.hetcclGetUniqueId(ctypes.byref(uid)))
    return ctypes.string_at(ctypes.addressof(uid), _lib.UNIQUE_ID_BYTES)


# ---- groups ----------------------------------------------------------------------------------------

_tls = threading.local()


def _keep(v):
    """Inside a group the C calls only queue: keep their buffers (capsules) alive until the group ends."""
    k = getattr(_tls, "keep", None)
    if k is not None:
        k.append(v)


class group:
    """Context manager: the calls inside run together at the end (hetcclGroupStart/GroupEnd); nests.
    Buffers passed inside are kept alive until the outermost group ends."""

    def __enter__(self):
        f = _lib.load()
        check(f.hetcclGroupStart())
        depth = getattr(_tls, "depth", 0)
        if depth == 0:
            _tls.keep = []
        _tls.depth = depth + 1
        return self

    def __exit__(self, exc_type, exc, tb):
        _tls.depth -= 1
        try:
            rc = _lib.fn.hetcclGroupEnd()
        finally:
            if _tls.depth == 0:
                _tls.keep = None
        if rc and exc_type is None:
            _raise(rc, None)
        return False


# ---- premul-sum ------------------------------------------------------------------------------------

def _pack_scalar(value, dtype):
    dtype = DataType(dtype)
    if dtype in (DataType.float8_e4m3, DataType.float8_e5m2):
        raise InvalidArgumentError("premul_sum: fp8 scalars are not supported by the Python layer")
    if dtype == DataType.bfloat16:
        bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        bits = (bits + 0x7FFF + (bits >> 16 & 1)) >> 16  # round to nearest even
        return struct.pack("<H", bits)
    fmt = {0: "b", 1: "B", 2: "i", 3: "I", 4: "q", 5: "Q", 6: "e", 7: "f", 8: "d"}[int(dtype)]
    return struct.pack("<" + fmt, value if fmt in "efd" else int(value))


class PreMulSumOp:
    """A reduction operator op(x) = sum over ranks of scalar_rank * x_rank (hetcclRedOpCreatePreMulSum),
    valid on its communicator for its dtype. Use as an `op=`; destroy() (or a with block) frees it."""

    def __init__(self, comm, scalar, dtype):
        f = _lib.load()
        self._comm = comm
        self.dtype = DataType(dtype)
        buf = ctypes.create_string_buffer(_pack_scalar(scalar, self.dtype), 8)
        h = ctypes.c_int()
        check(f.hetcclRedOpCreatePreMulSum(ctypes.byref(h), buf, int(self.dtype), 1, comm._live()), comm._h)
        self.handle = h.value

    def destroy(self):
        if self.handle is not None and self._comm._h:
            check(_lib.fn.hetcclRedOpDestroy(self.handle, self._comm._h), self._comm._h)
        self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False


# ---- the communicator -----------------------------------------------------------------------------

def _ids(unique_id):
    if isinstance(unique_id, str):
        unique_id = bytes.fromhex(unique_id)
    b = bytes(unique_id)
    if len(b) != _lib.UNIQUE_ID_BYTES:
        raise InvalidArgumentError(f"unique id: expected {_lib.UNIQUE_ID_BYTES} bytes, got {len(b)}")
    s = _lib.UniqueIdStruct()
    ctypes.memmove(ctypes.byref(s), b, len(b))
    return s


class Communicator:
    """One rank of a communicator (hetcclCommInitRank). Collective over all `nranks` ranks: blocks until
    every rank has joined (or HETCCL_TIMEOUT passes).

    Buffers are any object with __dlpack__ (NumPy, torch, CuPy, JAX; also bytearray/memoryview), used in
    place on their own memory: host memory (the call completes before it returns) or GPU memory of this
    rank's device (the call is enqueued on `stream` and returns at once; default: the producer's current
    stream). Collectives return their output object. Errors raise HetcclError subclasses."""

    def __init__(self, unique_id, nranks: int, rank: int, *, _handle=None, launch: LaunchEnv | None = None):
        f = _lib.load()
        self.launch = launch
        if _handle is None:
            h = ctypes.c_void_p()
            rc = f.hetcclCommInitRank(ctypes.byref(h), int(nranks), _ids(unique_id), int(rank))
            if rc:
                _raise(rc, None)
            _handle = h.value
        self._h = _handle
        v = ctypes.c_int()
        check(f.hetcclCommUserRank(self._h, ctypes.byref(v)), self._h)
        self.rank = v.value
        check(f.hetcclCommCount(self._h, ctypes.byref(v)), self._h)
        self.size = v.value
        check(f.hetcclCommCuDevice(self._h, ctypes.byref(v)), self._h)
        self.device = v.value  #: the device ordinal this rank is bound to; -1 for a CPU rank
        self._finalized = False
        self._rma = None

    # -- properties, lifetime --

    def __repr__(self):
        state = "closed" if not self._h else ("finalized" if self._finalized else "open")
        return f"<hetccl.Communicator rank {self.rank} of {self.size}, device {self.device}, {state}>"

    @property
    def handle(self) -> int:
        """The hetcclComm_t as an int (for other ctypes/C code)."""
        return self._live()

    def _live(self):
        h = self._h
        if not h:
            raise InvalidUsageError("the communicator was destroyed or aborted", 5)
        return h

    def async_error(self):
        """hetcclCommGetAsyncError: None, or the HetcclError that made the communicator unusable."""
        h = self._live()
        r = ctypes.c_int()
        check(_lib.fn.hetcclCommGetAsyncError(h, ctypes.byref(r)), h)
        if r.value:
            msg = _lib.fn.hetcclGetLastError(h)
            return make_error(r.value, msg.decode(errors="replace") if msg else "")
        return None

    def finalize(self):
        """Waits for queued device work and for every rank to finalize (collective)."""
        h = self._live()
        if self._rma is not None:
            self._rma._closing()
        check(_lib.fn.hetcclCommFinalize(h), h)
        self._finalized = True

    def destroy(self):
        """Frees the communicator, finalizing it first when that was not done (collective then)."""
        h = self._h
        if not h:
            return
        if self._rma is not None:
            self._rma._closing()
        self._h = None
        check(_lib.fn.hetcclCommDestroy(h), None)

    close = destroy

    def abort(self):
        """Frees the communicator without waiting for the other ranks; calls in flight fail."""
        h = self._h
        if not h:
            return
        if self._rma is not None:
            self._rma._closing()
        self._h = None
        check(_lib.fn.hetcclCommAbort(h), None)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.destroy()
        else:
            self.abort()  # this rank failed: do not wait for the others in finalize
        return False

    def split(self, color: int, key: int = 0):
        """hetcclCommSplit (collective): a Communicator of the ranks passing the same color, or None for
        color == hetccl.SPLIT_NOCOLOR (-1)."""
        h = self._live()
        out = ctypes.c_void_p()
        check(_lib.fn.hetcclCommSplit(h, int(color), int(key), ctypes.byref(out), None), h)
        return Communicator(None, 0, 0, _handle=out.value) if out.value else None

    def premul_sum(self, scalar, dtype) -> PreMulSumOp:
        """An op: sum over ranks of scalar_rank * x_rank for `dtype` (hetcclRedOpCreatePreMulSum)."""
        return PreMulSumOp(self, scalar, dtype)

    group = staticmethod(group)

    # -- argument helpers --

    def _view(self, obj, stream, writable, what):
        v = export(obj, stream, writable, what)
        if v[4] in GPU_DEVICES:
            if self.device < 0:
                raise InvalidUsageError(f"{what} is GPU memory (device {v[5]}) but this rank is a CPU rank "
                                        "(HETCCL_DEVICE, or no GPU plugin loaded): pass host memory", 5)
            if v[5] != self.device:
                raise InvalidArgumentError(f"{what} is on device {v[5]} but this rank is bound to device "
                                           f"{self.device}", 4)
        return v

    @staticmethod
    def _same(a, b, what):
        if a[8] != b[8]:
            raise InvalidArgumentError(f"{what}: dtypes differ ({dtype_name(a[8])} and {dtype_name(b[8])})", 4)

    @staticmethod
    def _reducing_type(v, what):
        t = v[2]
        if t == NO_TYPE:
            raise InvalidArgumentError(f"{what} has dtype {dtype_name(v[8])}, which hetccl cannot reduce (int8, "
                                       "uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64, "
                                       "float8_e4m3fn, float8_e5m2)", 4)
        return t

    @staticmethod
    def _moving(v):
        """(count, type) for collectives that only move data: unreducible dtypes move as bytes."""
        t = v[2]
        if t == NO_TYPE:
            return v[1] * v[3], 1
        return v[1], t

    # -- collectives --

    def all_reduce(self, buf, op=SUM, *, out=None, stream=None):
        """out[i] = op over ranks of buf[i]; in place on `buf` unless `out` is given. Returns the output."""
        h = self._live()
        s = self._view(buf, stream, out is None, "all_reduce buffer")
        t = self._reducing_type(s, "all_reduce buffer")
        if out is None:
            r = s
        else:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "all_reduce out")
            self._same(s, r, "all_reduce")
            if r[1] != s[1]:
                raise InvalidArgumentError(f"all_reduce: out has {r[1]} elements, buf {s[1]}", 4)
        rc = _lib.fn.hetcclAllReduce(s[0], r[0], s[1], t, _op(op), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r))
        return buf if out is None else out

    def broadcast(self, buf, root: int = 0, *, out=None, stream=None):
        """Every rank gets the root's `buf`; in place unless `out` is given (then `buf` is read on the root
        only). Returns the output."""
        h = self._live()
        s = self._view(buf, stream, out is None, "broadcast buffer")
        r = s
        if out is not None:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "broadcast out")
            self._same(s, r, "broadcast")
            if r[1] != s[1]:
                raise InvalidArgumentError(f"broadcast: out has {r[1]} elements, buf {s[1]}", 4)
        count, t = self._moving(s)
        rc = _lib.fn.hetcclBroadcast(s[0], r[0], count, t, int(root), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r))
        return buf if out is None else out

    def reduce(self, buf, root: int = 0, op=SUM, *, out=None, stream=None):
        """On the root, the op over ranks of `buf`: in place in the root's `buf`, or in `out` when given
        (not written on the other ranks). Returns `out` when given, else `buf`."""
        h = self._live()
        s = self._view(buf, stream, out is None and self.rank == root, "reduce buffer")
        t = self._reducing_type(s, "reduce buffer")
        r = s
        if out is not None:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "reduce out")
            self._same(s, r, "reduce")
            if r[1] != s[1]:
                raise InvalidArgumentError(f"reduce: out has {r[1]} elements, buf {s[1]}", 4)
        rc = _lib.fn.hetcclReduce(s[0], r[0], s[1], t, _op(op), int(root), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r))
        return buf if out is None else out

    def all_gather(self, send, out, *, stream=None):
        """out holds size * len(send) elements, rank r's `send` at offset r * len(send). send=None: in place
        (this rank's block of `out` is its input). Returns out."""
        h = self._live()
        r = self._view(out, stream, True, "all_gather out")
        if send is None:
            if r[1] % self.size:
                raise InvalidArgumentError(f"all_gather in place: out has {r[1]} elements, not a multiple of "
                                           f"{self.size} ranks", 4)
            count = r[1] // self.size
            sptr, s = r[0] + self.rank * count * r[3], r
        else:
            s = self._view(send, r[7] if r[7] is not None else stream, False, "all_gather send")
            self._same(s, r, "all_gather")
            count = s[1]
            if r[1] != count * self.size:
                raise InvalidArgumentError(f"all_gather: out has {r[1]} elements, expected {self.size} ranks x "
                                           f"{count} = {count * self.size}", 4)
            sptr = s[0]
        n, t = count, r[2]
        if t == NO_TYPE:
            n, t = count * r[3], 1
        rc = _lib.fn.hetcclAllGather(sptr, r[0], n, t, h, r[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r))
        return out

    def reduce_scatter(self, send, out=None, op=SUM, *, stream=None):
        """send holds size * n elements; this rank gets block `rank` reduced over ranks, in `out` (n
        elements) or, with out=None, in place in its own block of `send`. Returns the output (the block
        of send when in place, if send supports slicing)."""
        h = self._live()
        s = self._view(send, stream, out is None, "reduce_scatter send")
        t = self._reducing_type(s, "reduce_scatter send")
        if s[1] % self.size:
            raise InvalidArgumentError(f"reduce_scatter: send has {s[1]} elements, not a multiple of {self.size} "
                                       "ranks", 4)
        count = s[1] // self.size
        if out is None:
            r, rptr = s, s[0] + self.rank * count * s[3]
        else:
            r = self._view(out, s[7] if s[7] is not None else stream, True, "reduce_scatter out")
            self._same(s, r, "reduce_scatter")
            if r[1] != count:
                raise InvalidArgumentError(f"reduce_scatter: out has {r[1]} elements, expected {s[1]} / {self.size} "
                                           f"ranks = {count}", 4)
            rptr = r[0]
        rc = _lib.fn.hetcclReduceScatter(s[0], rptr, count, t, _op(op), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r))
        if out is not None:
            return out
        try:
            return send.reshape(-1)[self.rank * count:(self.rank + 1) * count]
        except Exception:  # noqa: BLE001 - not sliceable: the caller knows where the block is
            return send

    def all_to_all(self, send, out, *, stream=None):
        """Block p of `send` (len(send) / size elements) goes to rank p; block p of `out` comes from rank p.
        Returns out."""
        h = self._live()
        s = self._view(send, stream, False, "all_to_all send")
        if s[1] % self.size:
            raise InvalidArgumentError(f"all_to_all: send has {s[1]} elements, not a multiple of {self.size} ranks", 4)
        r = self._view(out, s[7] if s[7] is not None else stream, True, "all_to_all out")
        self._same(s, r, "all_to_all")
        if r[1] != s[1]:
            raise InvalidArgumentError(f"all_to_all: out has {r[1]} elements, send {s[1]}", 4)
        count, t = s[1] // self.size, s[2]
        if t == NO_TYPE:
            count, t = count * s[3], 1
        rc = _lib.fn.hetcclAlltoAll(s[0], r[0], count, t, h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r))
        return out

    def _counts(self, values, name):
        vals = [int(x) for x in values]
        if len(vals) != self.size:
            raise InvalidArgumentError(f"all_to_allv: {name} has {len(vals)} entries, expected one per rank "
                                       f"({self.size})", 4)
        if any(x < 0 for x in vals):
            raise InvalidArgumentError(f"all_to_allv: {name} has a negative entry", 4)
        return vals

    def all_to_allv(self, send, send_counts, out, recv_counts, send_displs=None, recv_displs=None, *,
                    stream=None):
        """send_counts[p] elements at send_displs[p] of `send` go to rank p; recv_counts[p] elements from rank
        p land at recv_displs[p] of `out` (element units; displacements default to the packed prefix
        sums). send_counts[p] here must equal recv_counts[this rank] on rank p. Returns out."""
        h = self._live()
        s = self._view(send, stream, False, "all_to_allv send")
        r = self._view(out, s[7] if s[7] is not None else stream, True, "all_to_allv out")
        self._same(s, r, "all_to_allv")
        sc = self._counts(send_counts, "send_counts")
        rc_ = self._counts(recv_counts, "recv_counts")
        sd = self._counts(send_displs, "send_displs") if send_displs is not None else _prefix(sc)
        rd = self._counts(recv_displs, "recv_displs") if recv_displs is not None else _prefix(rc_)
        for p in range(self.size):
            if sd[p] + sc[p] > s[1]:
                raise InvalidArgumentError(f"all_to_allv: block for rank {p} (displacement {sd[p]} + count {sc[p]}) "
                                           f"runs past the end of send ({s[1]} elements)", 4)
            if rd[p] + rc_[p] > r[1]:
                raise InvalidArgumentError(f"all_to_allv: block from rank {p} (displacement {rd[p]} + count "
                                           f"{rc_[p]}) runs past the end of out ({r[1]} elements)", 4)
        t = s[2]
        if t == NO_TYPE:  # move as bytes
            k = s[3]
            sc, rc_, sd, rd = ([x * k for x in a] for a in (sc, rc_, sd, rd))
            t = 1
        arr = ctypes.c_size_t * self.size
        a_sc, a_sd, a_rc, a_rd = arr(*sc), arr(*sd), arr(*rc_), arr(*rd)
        rc = _lib.fn.hetcclAlltoAllv(s[0], a_sc, a_sd, r[0], a_rc, a_rd, t, h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep((s, r, a_sc, a_sd, a_rc, a_rd))
        return out

    def send(self, buf, peer: int, *, stream=None):
        """Sends `buf` to rank `peer` (matched by its recv from this rank, in call order per pair). Use a
        group for exchanges so that neither side blocks the other."""
        h = self._live()
        s = self._view(buf, stream, False, "send buffer")
        count, t = self._moving(s)
        rc = _lib.fn.hetcclSend(s[0], count, t, int(peer), h, s[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep(s)
        return buf

    def recv(self, buf, peer: int, *, stream=None):
        """Receives into `buf` from rank `peer`. Returns buf."""
        h = self._live()
        r = self._view(buf, stream, True, "recv buffer")
        count, t = self._moving(r)
        rc = _lib.fn.hetcclRecv(r[0], count, t, int(peer), h, r[7])
        if rc:
            _raise(rc, h)
        if _tls.__dict__.get("keep") is not None:
            _keep(r)
        return buf

    def barrier(self):
        """Blocks until every rank has entered (host; device work already queued is not waited for)."""
        h = self._live()
        rc = _lib.fn.hetcclBarrier(h, None)
        if rc:
            _raise(rc, h)

    # -- byte helpers (descriptors, small messages) --

    def send_bytes(self, data: bytes, peer: int):
        """Sends a bytes object: its length, then its content (recv_bytes on the peer)."""
        n = ctypes.c_uint64(len(data))
        with group():
            self.send(memoryview(n).cast("B"), peer)
            if len(data):
                self.send(bytes(data), peer)

    def recv_bytes(self, peer: int) -> bytes:
        n = ctypes.c_uint64()
        self.recv(memoryview(n).cast("B"), peer)
        buf = bytearray(n.value)
        if n.value:
            self.recv(buf, peer)
        return bytes(buf)

    def broadcast_bytes(self, data: bytes | None, root: int = 0) -> bytes:
        """Every rank gets the root's bytes (length first; `data` is read on the root only)."""
        n = ctypes.c_uint64(len(data) if self.rank == root else 0)
        self.broadcast(memoryview(n).cast("B"), root)
        buf = bytearray(data) if self.rank == root else bytearray(n.value)
        if n.value:
            self.broadcast(buf, root)
        return bytes(buf)

    # -- one-sided (include/hetccl/hetccl_rma.h) --

    def rma_init(self):
        """hetcclRmaInit (collective, once): opens the RMA connections and starts the progress thread."""
        from ._rma import RmaState

        if self._rma is not None:
            raise InvalidUsageError("rma_init was already called on this communicator", 5)
        h = self._live()
        state = RmaState(self)
        check(_lib.fn.hetcclRmaInit(h), h)
        self._rma = state
        return self

    def register(self, obj, nbytes: int | None = None):
        """Registers the memory of `obj` (any DLPack object; the whole buffer, or its first `nbytes`) for
        remote access. Returns a Memory (its .descriptor() goes to the peers)."""
        from ._rma import Memory

        return Memory(self, obj, nbytes)

    def import_descriptor(self, desc: bytes):
        """Imports a peer's Memory.descriptor(): a RemoteMemory to put to / get from."""
        from ._rma import RemoteMemory

        return RemoteMemory(self, desc)

    def notify(self, peer: int, tag: int):
        """Queues notification `tag` to `peer`, delivered after every put this rank issued to it before."""
        h = self._rma_live()
        check(_lib.fn.hetcclNotify(h, int(peer), int(tag)), h)

    def poll_notification(self):
        """Never blocks: (peer, tag) of the oldest notification received, or None."""
        h = self._rma_live()
        p, t, got = ctypes.c_int(), ctypes.c_uint64(), ctypes.c_int()
        check(_lib.fn.hetcclNotifyPoll(h, ctypes.byref(p), ctypes.byref(t), ctypes.byref(got)), h)
        return (p.value, t.value) if got.value else None

    def wait_notification(self, peer: int, tag: int, timeout: float | None = None) -> bool:
        """Waits for notification `tag` from `peer` and takes it: True; False when `timeout` seconds passed
        (0: check once; None: up to HETCCL_TIMEOUT, then False). RemoteError when the peer failed."""
        h = self._rma_live()
        ms = -1 if timeout is None else max(0, int(round(timeout * 1000)))
        rc = _lib.fn.hetcclNotifyWait(h, int(peer), int(tag), ms)
        if rc == 7:  # hetcclInProgress: not there in time
            return False
        check(rc, h)
        return True

    def _rma_live(self):
        h = self._live()
        if self._rma is None:
            from ._rma import require_rma

            require_rma()
            raise InvalidUsageError("call comm.rma_init() first (collective)", 5)
        return h


def _prefix(counts):
    out, acc = [], 0
    for c in counts:
        out.append(acc)
        acc += c
    return out


# ---- init from a launcher --------------------------------------------------------------------------

def _select_device(local_rank):
    """Binds this thread to GPU local_rank % count when a GPU framework is already imported (as the tools
    do with their GPU runtime); hetccl binds a GPU rank to the device current at init."""
    if os.environ.get("HETCCL_DEVICE", "auto") == "host":
        return
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available() and torch.cuda.device_count() > 0:
                torch.cuda.set_device(local_rank % torch.cuda.device_count())
                return
        except Exception:  # noqa: BLE001 - a broken CUDA install: leave the device choice to hetccl
            pass
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            n = cupy.cuda.runtime.getDeviceCount()
            if n > 0:
                cupy.cuda.Device(local_rank % n).use()
        except Exception:  # noqa: BLE001
            pass


def init(*, set_device: bool = True, environ=None) -> Communicator:
    """Joins the job this process was launched into (hetccl-run, torchrun + HETCCL_SECRET, mpirun or srun
    + HETCCL_SECRET): reads rank, size and the unique id as the tools do and returns the Communicator.
    With set_device (default) and torch or cupy imported, binds the thread to GPU local_rank % count
    first."""
    env = launch_env(environ)
    if set_device:
        _select_device(env.local_rank)
    return Communicator(env.unique_id, env.size, env.rank, launch=env)
