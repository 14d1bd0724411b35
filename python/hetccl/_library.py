"""The loaded library: return codes to exceptions, version, path and unique id (include/hetccl/hetccl.h)."""

from __future__ import annotations

import ctypes

from . import _interrupt, _lib
from ._errors import INVALID_USAGE, make_error


def _error(rc, comm_handle):
    """The HetcclError for result `rc` of a call on `comm_handle`. When a SIGINT aborted that communicator
    (_interrupt.py), the pending KeyboardInterrupt is raised instead, or else an InvalidUsageError saying so."""
    if _interrupt.aborted and comm_handle in _interrupt.aborted:
        _interrupt.check_signals()
        return make_error(INVALID_USAGE, _interrupt.aborted[comm_handle])
    msg = _lib.fn.hetcclGetLastError(comm_handle)
    text = msg.decode(errors="replace") if msg else ""
    if not text:
        text = _lib.fn.hetcclGetErrorString(rc).decode(errors="replace")
    return make_error(rc, text)


def _raise(rc, comm_handle):
    raise _error(rc, comm_handle)


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

