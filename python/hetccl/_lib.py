"""Finding and loading libhetccl.so, and the ctypes prototypes of its C API (include/hetccl/hetccl.h and
include/hetccl/hetccl_rma.h).

Search order (the first that exists is loaded; library_path() / library_source() say which):
  1. $HETCCL_LIBRARY: a path to libhetccl.so (an error if set but not loadable: no silent fallback)
  2. a copy shipped inside the package (hetccl/_lib/libhetccl.so.0, put there by `pip install ./python`, which
     builds it with CMake, or copied from HETCCL_BUNDLE_LIBRARY; not with HETCCL_PIP_BUILD=0: python/setup.py)
  3. the dynamic loader's search path (LD_LIBRARY_PATH, ldconfig's cache): libhetccl.so.0, libhetccl.so
  4. the build tree of the source checkout the package was installed from (<repo>/build/libhetccl.so)
"""

from __future__ import annotations

import ctypes
import os
import threading

from ._errors import HetcclError

c_int = ctypes.c_int
c_int_p = ctypes.POINTER(ctypes.c_int)
c_size_t = ctypes.c_size_t
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)
c_void_p = ctypes.c_void_p
c_uint64 = ctypes.c_uint64

UNIQUE_ID_BYTES = 128
MEM_DESC_BYTES = 128


class UniqueIdStruct(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]


class MemDescStruct(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_ubyte * MEM_DESC_BYTES)]


class RmaRange(ctypes.Structure):
    _fields_ = [("localOffset", ctypes.c_size_t), ("remoteOffset", ctypes.c_size_t), ("bytes", ctypes.c_size_t)]


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# (name, restype, argtypes) of every function of hetccl.h this package uses.
_CORE = [
    ("hetcclGetVersion", c_int, [c_int_p]),
    ("hetcclGetErrorString", ctypes.c_char_p, [c_int]),
    ("hetcclGetLastError", ctypes.c_char_p, [c_void_p]),
    ("hetcclGetUniqueId", c_int, [ctypes.POINTER(UniqueIdStruct)]),
    ("hetcclCommInitRank", c_int, [ctypes.POINTER(c_void_p), c_int, UniqueIdStruct, c_int]),
    ("hetcclCommSplit", c_int, [c_void_p, c_int, c_int, ctypes.POINTER(c_void_p), c_void_p]),
    ("hetcclCommFinalize", c_int, [c_void_p]),
    ("hetcclCommDestroy", c_int, [c_void_p]),
    ("hetcclCommAbort", c_int, [c_void_p]),
    ("hetcclCommGetAsyncError", c_int, [c_void_p, c_int_p]),
    ("hetcclCommCount", c_int, [c_void_p, c_int_p]),
    ("hetcclCommCuDevice", c_int, [c_void_p, c_int_p]),
    ("hetcclCommUserRank", c_int, [c_void_p, c_int_p]),
    ("hetcclRedOpCreatePreMulSum", c_int, [c_int_p, c_void_p, c_int, c_int, c_void_p]),
    ("hetcclRedOpDestroy", c_int, [c_int, c_void_p]),
    ("hetcclAllReduce", c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    ("hetcclBroadcast", c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    ("hetcclReduce", c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_int, c_void_p, c_void_p]),
    ("hetcclAllGather", c_int, [c_void_p, c_void_p, c_size_t, c_int, c_void_p, c_void_p]),
    ("hetcclReduceScatter", c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    ("hetcclAlltoAll", c_int, [c_void_p, c_void_p, c_size_t, c_int, c_void_p, c_void_p]),
    ("hetcclAlltoAllv", c_int, [c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_int, c_void_p,
                                c_void_p]),
    ("hetcclSend", c_int, [c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    ("hetcclRecv", c_int, [c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    ("hetcclBarrier", c_int, [c_void_p, c_void_p]),
    ("hetcclGroupStart", c_int, []),
    ("hetcclGroupEnd", c_int, []),
]

# include/hetccl/hetccl_rma.h: bound when the library exports them (rma_available()).
_RMA = [
    ("hetcclRmaInit", c_int, [c_void_p]),
    ("hetcclMemRegister", c_int, [c_void_p, c_void_p, c_size_t, ctypes.POINTER(c_void_p)]),
    ("hetcclMemDeregister", c_int, [c_void_p]),
    ("hetcclMemExport", c_int, [c_void_p, ctypes.POINTER(MemDescStruct)]),
    ("hetcclMemQuery", c_int, [c_void_p, c_int_p, c_size_t_p]),
    ("hetcclMemImport", c_int, [c_void_p, ctypes.POINTER(MemDescStruct), ctypes.POINTER(c_void_p)]),
    ("hetcclRemoteMemQuery", c_int, [c_void_p, c_int_p, c_size_t_p]),
    ("hetcclRemoteMemRelease", c_int, [c_void_p]),
    ("hetcclPut", c_int, [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t, ctypes.POINTER(c_void_p)]),
    ("hetcclGet", c_int, [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t, ctypes.POINTER(c_void_p)]),
    ("hetcclPutBatch", c_int, [c_void_p, c_void_p, c_void_p, c_size_t, ctypes.POINTER(c_void_p)]),
    ("hetcclGetBatch", c_int, [c_void_p, c_void_p, c_void_p, c_size_t, ctypes.POINTER(c_void_p)]),
    ("hetcclRequestTest", c_int, [c_void_p, c_int_p]),
    ("hetcclRequestWait", c_int, [c_void_p]),
    ("hetcclRequestFree", c_int, [c_void_p]),
    ("hetcclNotify", c_int, [c_void_p, c_int, c_uint64]),
    ("hetcclNotifyPoll", c_int, [c_void_p, c_int_p, ctypes.POINTER(c_uint64), c_int_p]),
    ("hetcclNotifyWait", c_int, [c_void_p, c_int, c_uint64, c_int]),
]

# Calls that can block (collectives and send/recv on host buffers, barrier, split, finalize, destroy, RMA
# init and notification waits) and the position of their communicator argument. When the main thread
# makes one, its handle is recorded in `inside` for the duration of the call, so that a SIGINT can abort
# that communicator and the call returns (_interrupt.py). Costs ~0.1 us per call (python/README.md); other threads'
# calls are not recorded (as in Python itself, only the main thread gets KeyboardInterrupt).
_BLOCKING = {
    "hetcclAllReduce": 5, "hetcclBroadcast": 5, "hetcclReduce": 6, "hetcclAllGather": 4, "hetcclReduceScatter": 5,
    "hetcclAlltoAll": 4, "hetcclAlltoAllv": 7, "hetcclSend": 4, "hetcclRecv": 4, "hetcclBarrier": 0,
    "hetcclCommSplit": 0, "hetcclCommFinalize": 0, "hetcclRmaInit": 0, "hetcclNotifyWait": 0,
}
_MAIN = threading.main_thread().ident  # updated in a forked child (_interrupt.py)
_get_ident = threading.get_ident
inside = None       # handle (int), or tuple of handles (a group's end), the main thread is blocked on
inside_call = None  # the C function's name
settling = False    # True once a signal aborted a communicator: calls then wait for that abort to end
_settle = None      # _interrupt.settle, set by _interrupt when it is imported (this module imports nothing of it)


def run_blocking(hs, name, f, *a):
    """f(*a), recording `hs` (a handle or a tuple of them) as what the main thread is blocked on."""
    global inside, inside_call
    if _get_ident() != _MAIN:
        return f(*a)
    inside, inside_call = hs, name
    try:
        return f(*a)
    finally:
        inside = None
        if settling:
            _settle(hs)


def _tracked(f, name, pos):
    def call(*a):
        global inside, inside_call
        if _get_ident() != _MAIN:
            return f(*a)
        h = a[pos]
        inside, inside_call = h, name
        try:
            return f(*a)
        finally:
            inside = None
            if settling:
                _settle(h)

    call.raw = f
    call.__name__ = name
    return call


def is_main_thread() -> bool:
    return _get_ident() == _MAIN


_lock = threading.Lock()
lib = None            # the ctypes.CDLL once loaded
fn = None             # namespace of bound functions: fn.hetcclAllReduce(...) (blocking ones wrapped: _tracked)
_path = None          # absolute path of the loaded file
_source = None        # which rule of the search order found it
_rma_missing = None   # names of RMA functions the library lacks (None: not checked yet)


class _Functions:
    pass


def _candidates():
    """(source, path-or-name, must_load) in search order."""
    env = os.environ.get("HETCCL_LIBRARY")
    if env:
        yield "HETCCL_LIBRARY", env, True
        return
    bundled_dir = os.path.join(_PACKAGE_DIR, "_lib")
    for name in ("libhetccl.so.0", "libhetccl.so"):
        p = os.path.join(bundled_dir, name)
        if os.path.exists(p):
            yield "bundled in the package", p, True
    for name in ("libhetccl.so.0", "libhetccl.so"):
        yield "dynamic loader search path", name, False
    roots = []
    try:
        from . import _build_info  # written by setup.py at install time

        roots.append(_build_info.SOURCE_ROOT)
    except ImportError:
        pass
    roots.append(os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..")))  # running from the checkout
    for root in roots:
        if root:
            p = os.path.join(root, "build", "libhetccl.so")
            if os.path.exists(p):
                yield f"build tree ({root}/build)", p, False


def _resolve_path(handle) -> str:
    """The file the loader actually mapped (dladdr on a symbol)."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", c_void_p), ("dli_sname", ctypes.c_char_p),
                    ("dli_saddr", c_void_p)]

    try:
        libdl = ctypes.CDLL(None)
        dladdr = libdl.dladdr
        dladdr.argtypes = [c_void_p, ctypes.POINTER(DlInfo)]
        dladdr.restype = c_int
        info = DlInfo()
        addr = ctypes.cast(handle.hetcclGetVersion, c_void_p).value
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(info.dli_fname.decode())
    except (AttributeError, OSError):
        pass
    return os.path.realpath(handle._name) if os.path.sep in handle._name else handle._name


def load():
    """Loads the library once (thread-safe) and returns the namespace of bound functions."""
    global lib, fn, _path, _source
    if fn is not None:
        return fn
    with _lock:
        if fn is not None:
            return fn
        tried = []
        handle = None
        for source, name, must in _candidates():
            try:
                handle = ctypes.CDLL(name)
            except OSError as e:
                tried.append(f"{name} ({source}): {e}")
                if must:
                    raise HetcclError(f"cannot load libhetccl from {source}: {name}: {e}") from None
                continue
            _source = source
            break
        if handle is None:
            raise HetcclError("libhetccl.so not found; set HETCCL_LIBRARY=/path/to/libhetccl.so (tried: "
                              + "; ".join(tried) + ")")
        ns = _Functions()
        for name, restype, argtypes in _CORE:
            f = getattr(handle, name)
            f.restype = restype
            f.argtypes = argtypes
            setattr(ns, name, _tracked(f, name, _BLOCKING[name]) if name in _BLOCKING else f)
        lib = handle
        _path = _resolve_path(handle)
        fn = ns
        return fn


def rma_missing():
    """Names of the hetccl_rma.h functions the loaded library does not export (empty: RMA available)."""
    global _rma_missing
    f = load()
    if _rma_missing is None:
        missing = []
        for name, restype, argtypes in _RMA:
            try:
                g = getattr(lib, name)
            except AttributeError:
                missing.append(name)
                continue
            g.restype = restype
            g.argtypes = argtypes
            setattr(f, name, _tracked(g, name, _BLOCKING[name]) if name in _BLOCKING else g)
        _rma_missing = missing
    return _rma_missing


def library_path() -> str:
    load()
    return _path


def library_source() -> str:
    load()
    return _source
