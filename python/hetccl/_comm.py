"""Communicator: lifetime, split and init from a launcher of include/hetccl/hetccl.h over DLPack; its
collectives, send/recv and one-sided calls are mixins (_collectives.py, _p2p.py, _comm_rma.py)."""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from . import _interrupt, _lib
from ._collectives import Collectives
from ._comm_rma import RmaCalls
from ._dlpack import GPU_DEVICES, NO_TYPE, dtype_name, export
from ._errors import DtypeError, InvalidArgumentError, InvalidUsageError, make_error
from ._group import group
from ._launch import LaunchEnv, launch_env
# Re-exported from here as before the split (hetccl/__init__.py and _rma.py import them from this module).
from ._library import _error, _raise, check, get_unique_id, library_path, library_source, version  # noqa: F401
from ._p2p import PointToPoint
from ._types import AVG, MAX, MIN, PROD, SUM, DataType, PreMulSumOp, ReduceOp, _int32  # noqa: F401


# ---- the communicator -----------------------------------------------------------------------------

_claim_lock = threading.Lock()  # destroy/abort against the SIGINT thread's abort: one of them takes the handle


def _ids(unique_id):
    if isinstance(unique_id, str):
        unique_id = bytes.fromhex(unique_id)
    b = bytes(unique_id)
    if len(b) != _lib.UNIQUE_ID_BYTES:
        raise InvalidArgumentError(f"unique id: expected {_lib.UNIQUE_ID_BYTES} bytes, got {len(b)}")
    s = _lib.UniqueIdStruct()
    ctypes.memmove(ctypes.byref(s), b, len(b))
    return s


class Communicator(Collectives, PointToPoint, RmaCalls):
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
            n, r = _int32(nranks, "nranks"), _int32(rank, "rank")
            rc = f.hetcclCommInitRank(ctypes.byref(h), n, _ids(unique_id), r)
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
        self._why = None  # why the handle is gone, when a SIGINT aborted it (_interrupt.py)
        _interrupt.register(self, self._h)  # Ctrl-C in a blocking call of the main thread aborts it

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
            raise InvalidUsageError(self._why or "the communicator was destroyed or aborted", 5)
        return h

    def _claim(self):
        """Takes the handle (None when destroy/abort, here or on the SIGINT thread, already took it)."""
        with _claim_lock:
            h, self._h = self._h, None
        return h

    def _abort_on_signal(self, h, why):
        """On _interrupt's thread, while the main thread is blocked in a call on `h`: aborts it."""
        with _claim_lock:
            if self._h == h:
                self._h = None
        self._why = why
        _interrupt.comms.pop(h, None)
        if self._rma is not None:
            self._rma._closing()
        _lib.fn.hetcclCommAbort(h)  # the blocked call returns; it reaps the parked requests (destroy/abort)

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
        h = self._claim()
        if not h:
            self._gone(None)
            return
        if self._rma is not None:
            self._rma._closing()
        try:
            if not self._finalized and _lib.is_main_thread():
                # Finalize first, as its own call: hetcclCommDestroy unregisters the handle before it
                # finalizes, so a Ctrl-C there could not abort it (_interrupt.py).
                rc = _lib.fn.hetcclCommFinalize(h)
                if rc:
                    err = _error(rc, h)
                    if _interrupt.aborted.get(h) is None:  # not aborted by a signal: free it now
                        _lib.fn.hetcclCommDestroy(h)  # finalize is not repeated
                    raise err
            check(_lib.fn.hetcclCommDestroy(h), None)
        finally:
            self._gone(h)

    close = destroy

    def abort(self):
        """Frees the communicator without waiting for the other ranks; calls in flight fail."""
        h = self._claim()
        if not h:
            self._gone(None)
            return
        if self._rma is not None:
            self._rma._closing()
        try:
            check(_lib.fn.hetcclCommAbort(h), None)
        finally:
            self._gone(h)

    def _gone(self, h):
        if h is not None:
            _interrupt.comms.pop(h, None)
        if self._rma is not None:
            self._rma.reap()  # the transfers have ended with the communicator: release their buffers
        if _lib.is_main_thread():
            _interrupt.maybe_uninstall()  # no communicator left: the wakeup fd as it was before

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
        check(_lib.fn.hetcclCommSplit(h, _int32(color, "color"), _int32(key, "key"), ctypes.byref(out), None), h)
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
            raise DtypeError(f"{what} has dtype {dtype_name(v[8])}, which hetccl cannot reduce (int8, uint8, int32, "
                             "uint32, int64, uint64, float16, bfloat16, float32, float64, float8_e4m3fn, "
                             "float8_e5m2)", 4)
        return t

    @staticmethod
    def _moving(v):
        """(count, type) for collectives that only move data: unreducible dtypes move as bytes."""
        t = v[2]
        if t == NO_TYPE:
            return v[1] * v[3], 1
        return v[1], t


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
