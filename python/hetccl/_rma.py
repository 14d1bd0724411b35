"""One-sided API (include/hetccl/hetccl_rma.h): registered memory, descriptors, put/get (single and
batched), requests and notifications. Bound when the loaded library exports it (rma_available()).
Stream-ordered forms (Memory.put_on_stream / get_on_stream, notify_on_stream) are bound at their first use."""

from __future__ import annotations

import ctypes

from . import _interrupt, _lib
from ._library import check
from ._dlpack import GPU_DEVICES, export, producer_stream, stream_handle
from ._errors import INVALID_USAGE, REMOTE_ERROR, HetcclError, InvalidArgumentError, make_error
from ._types import _int32, _uint

MEM_KINDS = {0: "host", 1: "cuda", 2: "hip"}


class RmaUnavailableError(HetcclError, NotImplementedError):
    """The loaded libhetccl does not export the functions of hetccl_rma.h (an older build)."""

    result = 5


def rma_available() -> bool:
    """True when the loaded libhetccl exports every function of hetccl_rma.h."""
    return not _lib.rma_missing()


def require_rma():
    missing = _lib.rma_missing()
    if missing:
        raise RmaUnavailableError(f"{_lib.library_path()} does not export the RMA API of hetccl_rma.h (missing "
                                  f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}): this library "
                                  "predates it")


_STREAM_FNS = {
    "hetcclPutOnStream": [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                          ctypes.c_void_p],
    "hetcclGetOnStream": [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                          ctypes.c_void_p],
    "hetcclNotifyOnStream": [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p],
    "hetcclPutBatchOnStream": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p],
    "hetcclGetBatchOnStream": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p],
}


def _stream_fn(name):
    """The stream-ordered function `name`, bound at its first use (RmaUnavailableError with a library that
    predates it: older libraries lack hetcclNotifyOnStream, or answer hetcclPutOnStream with InvalidUsage)."""
    require_rma()
    f = getattr(_lib.fn, name, None)
    if f is None:
        try:
            f = getattr(_lib.lib, name)
        except AttributeError:
            raise RmaUnavailableError(f"{_lib.library_path()} does not export {name} (stream-ordered RMA): this "
                                      "library predates it") from None
        f.restype = ctypes.c_int
        f.argtypes = _STREAM_FNS[name]
        setattr(_lib.fn, name, f)
    return f


def notify_on_stream(comm, peer: int, tag: int, stream=None):
    """hetcclNotifyOnStream: sends notification `tag` to `peer` once `stream` (an int handle or a stream
    object; None: the default stream) gets there -- after the data of every put_on_stream queued before it
    on that stream. Does not hold the stream. A failure after the call becomes comm's asynchronous error."""
    peer, tag = _int32(peer, "peer"), _uint(tag, "tag")
    h = comm._rma_live()
    s = stream_handle(stream) if stream is not None else 0
    check(_stream_fn("hetcclNotifyOnStream")(h, peer, tag, s or None), h)


class RmaState:
    def __init__(self, comm):
        require_rma()
        self.comm = comm
        self.closed = False
        # Requests dropped while pending: (handle, what they keep alive). The buffers, their Memory and
        # RemoteMemory stay referenced here until the transfer ended (freeing them mid-transfer crashed the
        # progress thread on shm and broke the tcp channel); reap() frees the finished ones.
        self.orphans = []

    def _closing(self):
        self.closed = True

    def reap(self):
        """Frees the dropped requests that have ended and releases what they kept alive."""
        if not self.orphans or _lib.fn is None:
            return
        still = []
        for r, keep in self.orphans:
            d = ctypes.c_int()
            if _lib.fn.hetcclRequestTest(r, ctypes.byref(d)) or d.value:
                _lib.fn.hetcclRequestFree(r)
            else:
                still.append((r, keep))
        self.orphans = still


def _ranges(ranges):
    """(pointer, n, keep) of hetcclRmaRange_t[n]: from (local_offset, remote_offset, nbytes) tuples, or
    zero-copy from a contiguous (n, 3) uint64/int64 DLPack array."""
    if hasattr(ranges, "__dlpack__"):
        v = export(ranges, None, False, "ranges")
        if v[2] not in (4, 5) or v[1] % 3:
            raise InvalidArgumentError("ranges: expected an (n, 3) array of int64/uint64 (local_offset, "
                                       "remote_offset, nbytes)", 4)
        return v[0], v[1] // 3, v
    rows = [tuple(r) for r in ranges]
    for i, r in enumerate(rows):
        if len(r) != 3:
            raise InvalidArgumentError(f"ranges: each range is (local_offset, remote_offset, nbytes) >= 0, got {r}", 4)
        rows[i] = tuple(_uint(x, f"ranges[{i}].{f}") for x, f in zip(r, ("local_offset", "remote_offset", "nbytes")))
    arr = (_lib.RmaRange * max(1, len(rows)))(*rows)
    return ctypes.addressof(arr), len(rows), arr


def _offsets(local_offset, remote_offset, nbytes):
    """put/get's size_t arguments, range-checked (ctypes would wrap 2**64 + 8 to 8: a put at a wrong offset)."""
    return _uint(local_offset, "local_offset"), _uint(remote_offset, "remote_offset"), _uint(nbytes, "nbytes")


class Request:
    """One put/get (or batch) in flight. wait() blocks until done (raises its error); test() never
    blocks. The buffers stay referenced until it is done."""

    __slots__ = ("_r", "_comm_h", "_keep", "_error", "_done", "_state")

    def __init__(self, handle, comm_h, keep, state=None):
        self._r = handle
        self._comm_h = comm_h
        self._keep = keep
        self._error = None
        self._done = False
        self._state = state  # the communicator's RmaState: a dropped pending request is parked there

    def _finish(self, rc):
        r, self._r = self._r, None
        if rc:
            why = _interrupt.aborted.get(self._comm_h) if _interrupt.aborted else None
            if why is not None:  # Ctrl-C aborted the communicator (_interrupt.py)
                self._error = make_error(INVALID_USAGE, why)
            else:
                msg = _lib.fn.hetcclGetLastError(self._comm_h)
                self._error = make_error(rc, msg.decode(errors="replace") if msg else "")
        else:
            self._done = True
        _lib.fn.hetcclRequestFree(r)
        self._keep = None

    def wait(self):
        """Blocks until done; raises the request's error (RemoteError naming the peer on failure/timeout)."""
        if self._r is not None:  # a Ctrl-C on the main thread aborts the communicator: the wait returns
            self._finish(_lib.run_blocking(self._comm_h, "hetcclRequestWait", _lib.fn.hetcclRequestWait, self._r))
        if self._error is not None:
            if _interrupt.aborted and self._comm_h in _interrupt.aborted:
                _interrupt.check_signals()  # the pending KeyboardInterrupt, not the error
            raise self._error
        return self

    def test(self) -> bool:
        """True once done, False while pending; raises the request's error if it failed."""
        if self._r is not None:
            d = ctypes.c_int()
            rc = _lib.fn.hetcclRequestTest(self._r, ctypes.byref(d))
            if rc or d.value:
                self._finish(rc)
        if self._error is not None:
            raise self._error
        return self._done

    @property
    def done(self) -> bool:
        return self._done

    def __del__(self):
        r = self._r
        if r is not None and _lib is not None and _lib.fn is not None:
            try:  # finished: freed; still pending: parked with its buffers until it ends (RmaState.reap)
                d = ctypes.c_int()
                if _lib.fn.hetcclRequestTest(r, ctypes.byref(d)) or d.value:
                    _lib.fn.hetcclRequestFree(r)
                elif self._state is not None:
                    self._state.orphans.append((r, self._keep))
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


def wait_all(requests):
    """Waits for every request; raises the first error after all have ended."""
    first = None
    for r in requests:
        try:
            r.wait()
        except HetcclError as e:
            first = first or e
    if first is not None:
        raise first


class RemoteMemory:
    """A peer's registration, imported from its descriptor bytes: .rank (owner), .nbytes."""

    def __init__(self, comm, desc):
        h = comm._rma_live()
        b = bytes(desc)
        if len(b) != _lib.MEM_DESC_BYTES:
            raise InvalidArgumentError(f"descriptor: expected {_lib.MEM_DESC_BYTES} bytes, got {len(b)}", 4)
        d = _lib.MemDescStruct()
        ctypes.memmove(ctypes.byref(d), b, len(b))
        out = ctypes.c_void_p()
        check(_lib.fn.hetcclMemImport(h, ctypes.byref(d), ctypes.byref(out)), h)
        self._r = out.value
        self._comm = comm
        rank, nbytes = ctypes.c_int(), ctypes.c_size_t()
        check(_lib.fn.hetcclRemoteMemQuery(self._r, ctypes.byref(rank), ctypes.byref(nbytes)), h)
        self.rank = rank.value
        self.nbytes = nbytes.value

    def __repr__(self):
        return f"<hetccl.RemoteMemory of rank {self.rank}, {self.nbytes} bytes>"

    def release(self):
        r, self._r = self._r, None
        if r:
            rc = _lib.fn.hetcclRemoteMemRelease(r)
            if rc and self._comm._h and not self._comm._rma.closed:
                check(rc, self._comm._h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def __del__(self):
        if getattr(self, "_r", None) and _lib is not None and _lib.fn is not None:
            try:
                _lib.fn.hetcclRemoteMemRelease(self._r)
            except Exception:  # noqa: BLE001
                pass


class Memory:
    """A local registration (hetcclMemRegister) of a DLPack object's memory, kept alive while registered.
    .descriptor() -> bytes for peers; .kind ("host", "cuda", "hip"); .nbytes."""

    def __init__(self, comm, obj, nbytes=None):
        h = comm._rma_live()
        v = comm._view(obj, None, True, "registered buffer")
        total = v[1] * v[3]
        n = total if nbytes is None else _uint(nbytes, "register: nbytes")
        if n <= 0 or n > total:
            raise InvalidArgumentError(f"register: nbytes {n} must be in [1, {total}] (the buffer's size)", 4)
        out = ctypes.c_void_p()
        check(_lib.fn.hetcclMemRegister(h, v[0], n, ctypes.byref(out)), h)
        self._m = out.value
        self._view = v
        self._comm = comm
        self.obj = obj
        kind, size = ctypes.c_int(), ctypes.c_size_t()
        check(_lib.fn.hetcclMemQuery(self._m, ctypes.byref(kind), ctypes.byref(size)), h)
        self.kind = MEM_KINDS.get(kind.value, str(kind.value))
        self.nbytes = size.value
        self._desc = None

    def __repr__(self):
        return f"<hetccl.Memory {self.kind}, {self.nbytes} bytes{'' if self._m else ', deregistered'}>"

    def _live(self):
        if not self._m:
            raise InvalidArgumentError("this Memory was deregistered", 4)
        return self._m

    def _live_towards(self, remote):
        """This registration's handle for a transfer with `remote`, which must be a RemoteMemory."""
        m = self._live()
        if not isinstance(remote, RemoteMemory):
            raise InvalidArgumentError("remote: expected a RemoteMemory (comm.import_descriptor(bytes))", 4)
        return m

    def descriptor(self) -> bytes:
        """The registration's descriptor (128 bytes; no secret, no address): give it to the peers."""
        if self._desc is None:
            d = _lib.MemDescStruct()
            check(_lib.fn.hetcclMemExport(self._live(), ctypes.byref(d)), self._comm._h)
            self._desc = bytes(d.bytes)
        return self._desc

    def _one(self, func, local_offset, remote, remote_offset, nbytes):
        lo, ro, n = _offsets(local_offset, remote_offset, nbytes)
        m = self._live_towards(remote)
        req = ctypes.c_void_p()
        rc = func(m, lo, remote._r, ro, n, ctypes.byref(req))
        if rc:
            check(rc, self._comm._h)
        state = self._comm._rma
        state.reap()
        return Request(req.value, self._comm._h, (self, remote), state)

    def put(self, local_offset: int, remote, remote_offset: int, nbytes: int) -> Request:
        """Writes nbytes from this registration at local_offset to `remote` at remote_offset."""
        return self._one(_lib.fn.hetcclPut, local_offset, remote, remote_offset, nbytes)

    def get(self, local_offset: int, remote, remote_offset: int, nbytes: int) -> Request:
        """Reads nbytes from `remote` at remote_offset into this registration at local_offset."""
        return self._one(_lib.fn.hetcclGet, local_offset, remote, remote_offset, nbytes)

    def _stream_of(self, stream):
        """The stream handle for a stream-ordered call: `stream`, else the registered object's producer stream."""
        if stream is not None:
            return stream_handle(stream)
        if self._view[4] in GPU_DEVICES:
            return producer_stream(self.obj, self._view[4], self._view[5])
        return 0

    def _on_stream(self, name, local_offset, remote, remote_offset, nbytes, stream):
        lo, ro, n = _offsets(local_offset, remote_offset, nbytes)
        m = self._live_towards(remote)
        s = self._stream_of(stream)
        rc = _stream_fn(name)(m, lo, remote._r, ro, n, s or None)
        if rc:
            check(rc, self._comm._h)

    def _batch_on_stream(self, name, remote, ranges, stream):
        m = self._live_towards(remote)
        ptr, n, _keep = _ranges(ranges)  # the library copies the ranges during the call
        s = self._stream_of(stream)
        rc = _stream_fn(name)(m, remote._r, ptr, n, s or None)
        if rc:
            check(rc, self._comm._h)

    def put_on_stream(self, local_offset: int, remote, remote_offset: int, nbytes: int, stream=None):
        """hetcclPutOnStream: the put starts once `stream` gets there (after the work queued on it before,
        e.g. the kernel that wrote the block) and later work on `stream` waits until the data is in place
        at the target. No Request: a failure after the call is the communicator's asynchronous error (the
        stream is released). `stream`: an int handle or a stream object; default: the producer's current
        stream of the registered object. The registration stays in use until the transfer ended. GPU ranks
        only (InvalidUsageError on a CPU rank or while the stream is being captured)."""
        self._on_stream("hetcclPutOnStream", local_offset, remote, remote_offset, nbytes, stream)

    def get_on_stream(self, local_offset: int, remote, remote_offset: int, nbytes: int, stream=None):
        """hetcclGetOnStream: as put_on_stream; later work on `stream` sees the data in this registration."""
        self._on_stream("hetcclGetOnStream", local_offset, remote, remote_offset, nbytes, stream)

    def put_batch_on_stream(self, remote, ranges, stream=None):
        """hetcclPutBatchOnStream: many puts (ranges of (local_offset, remote_offset, nbytes), as put_batch)
        as one stream-ordered transfer (see put_on_stream): later work on `stream` waits for every range."""
        self._batch_on_stream("hetcclPutBatchOnStream", remote, ranges, stream)

    def get_batch_on_stream(self, remote, ranges, stream=None):
        """hetcclGetBatchOnStream: many gets as one stream-ordered transfer (see get_on_stream)."""
        self._batch_on_stream("hetcclGetBatchOnStream", remote, ranges, stream)

    def _batch(self, func, remote, ranges):
        m = self._live_towards(remote)
        ptr, n, keep = _ranges(ranges)
        req = ctypes.c_void_p()
        rc = func(m, remote._r, ptr, n, ctypes.byref(req))
        if rc:
            check(rc, self._comm._h)
        state = self._comm._rma
        state.reap()
        return Request(req.value, self._comm._h, (self, remote, keep), state)

    def put_batch(self, remote, ranges) -> Request:
        """Many puts as one request: ranges of (local_offset, remote_offset, nbytes), applied in order."""
        return self._batch(_lib.fn.hetcclPutBatch, remote, ranges)

    def get_batch(self, remote, ranges) -> Request:
        """Many gets as one request: ranges of (local_offset, remote_offset, nbytes)."""
        return self._batch(_lib.fn.hetcclGetBatch, remote, ranges)

    def deregister(self):
        """Ends the registration (remote accesses fail as stale afterwards) and releases the buffer. Device
        memory that peers of this host copied through IPC: returns once each closed its mapping, so the
        memory may be freed; RemoteError names a peer that did not confirm (the registration has ended all
        the same, but the memory must not be freed while that peer may still map it)."""
        m = self._m
        if not m:
            return
        self._comm._rma.reap()
        rc = _lib.fn.hetcclMemDeregister(m)
        if rc == REMOTE_ERROR:  # the registration has ended (a peer did not confirm its unmapping)
            self._m = self._view = self.obj = None
        if rc and self._comm._h and not self._comm._rma.closed:
            check(rc, self._comm._h)  # e.g. local requests still pending: still registered
        self._m = self._view = self.obj = None  # the buffer is no longer kept alive

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deregister()
        return False

    def __del__(self):
        if getattr(self, "_m", None) and _lib is not None and _lib.fn is not None:
            try:
                _lib.fn.hetcclMemDeregister(self._m)
            except Exception:  # noqa: BLE001
                pass
