"""The agent API's C bindings (include/hetccl/hetccl_agent.h): its structs, the functions bound at first use when
the loaded library exports all of them (agent_available()), and the argument conversions shared by _agent.py,
_agent_ranges.py and _agent_memory.py."""

from __future__ import annotations

import ctypes
import enum
import threading

from . import _lib
from ._errors import INVALID_USAGE, HetcclError, InvalidArgumentError

NAME_MAX = 63            # HETCCL_AGENT_NAME_MAX
NOTIF_MAX = 4096         # HETCCL_AGENT_NOTIF_MAX
_NOTIF_FIRST_CAPACITY = 256  # get_notif's first buffer; a larger message is taken again with its size


class AgentOp(enum.IntEnum):
    """hetcclAgentOp_t."""

    READ = 0   # peer -> local
    WRITE = 1  # local -> peer
    NOTIFY = 2  # a notification only (hetcclAgentPrepNotif; not a value of hetcclAgentOp_t)


READ, WRITE = AgentOp.READ, AgentOp.WRITE
_OPS = {"read": READ, "write": WRITE, READ: READ, WRITE: WRITE}


class AgentOptions(ctypes.Structure):
    """hetcclAgentOptions_t."""

    _fields_ = [("secret", ctypes.c_void_p), ("secretBytes", ctypes.c_size_t), ("listenAddress", ctypes.c_char_p),
                ("device", ctypes.c_int), ("timeoutSeconds", ctypes.c_double)]


class AgentRange(ctypes.Structure):
    """hetcclAgentRange_t: 32 bytes."""

    _fields_ = [("localRegion", ctypes.c_uint32), ("remoteRegion", ctypes.c_uint32), ("localOffset", ctypes.c_uint64),
                ("remoteOffset", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]


assert ctypes.sizeof(AgentRange) == 32
RANGE_FIELDS = ("localRegion", "remoteRegion", "localOffset", "remoteOffset", "bytes")
_RANGE_TYPES = ("u4", "u4", "u8", "u8", "u8")

_vp, _sz, _u32, _u64, _int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
_P = ctypes.POINTER
_FNS = [
    ("hetcclAgentOptionsInit", [_P(AgentOptions)]),
    ("hetcclAgentCreate", [ctypes.c_char_p, _P(AgentOptions), _P(_vp)]),
    ("hetcclAgentDestroy", [_vp]),
    ("hetcclAgentGetMetadata", [_vp, _vp, _P(_sz)]),
    ("hetcclAgentLoadRemote", [_vp, _vp, _sz, _vp]),
    ("hetcclAgentForgetRemote", [_vp, ctypes.c_char_p]),
    ("hetcclAgentRegister", [_vp, _vp, _sz, _P(_vp), _P(_u32)]),
    ("hetcclAgentDeregister", [_vp]),
    ("hetcclAgentMemQuery", [_vp, _P(_u32), _P(_int), _P(_sz)]),
    ("hetcclAgentStridedRanges", [_vp, _sz, _u32, _u64, _u64, _u32, _u64, _u64, _u64]),
    ("hetcclAgentPrepXfer", [_vp, _int, ctypes.c_char_p, _vp, _sz, _vp, _sz, _P(_vp)]),
    ("hetcclAgentPostXfer", [_vp]),
    ("hetcclAgentCheckXfer", [_vp]),
    ("hetcclAgentWaitXfer", [_vp]),
    ("hetcclAgentCancelXfer", [_vp]),
    ("hetcclAgentReleaseXfer", [_vp]),
    ("hetcclAgentGenNotif", [_vp, ctypes.c_char_p, _vp, _sz]),
    ("hetcclAgentPrepNotif", [_vp, ctypes.c_char_p, _vp, _sz, _P(_vp)]),
    ("hetcclAgentGetNotif", [_vp, _vp, _vp, _sz, _P(_sz), _P(_int)]),
]


class AgentUnavailableError(HetcclError, NotImplementedError):
    """The loaded libhetccl does not export the functions of hetccl_agent.h (an older build)."""

    result = INVALID_USAGE


class _Fns:
    pass


_bind_lock = threading.Lock()
_fns = None      # the bound functions (a _Fns), once every one was found
_missing = None  # names the library lacks (None: not looked up yet)


def agent_missing():
    """Names of the hetccl_agent.h functions the loaded library does not export (empty: agents available)."""
    global _fns, _missing
    if _missing is None:
        _lib.load()
        with _bind_lock:
            if _missing is None:
                ns, missing = _Fns(), []
                for name, argtypes in _FNS:
                    try:
                        f = getattr(_lib.lib, name)
                    except AttributeError:
                        missing.append(name)
                        continue
                    f.restype = ctypes.c_int
                    f.argtypes = argtypes
                    setattr(ns, name, f)
                if not missing:
                    _fns = ns
                _missing = missing
    return _missing


def agent_available() -> bool:
    """True when the loaded libhetccl exports every function of hetccl_agent.h."""
    return not agent_missing()


def _f():
    if _fns is None:
        missing = agent_missing()
        if missing:
            raise AgentUnavailableError(
                f"{_lib.library_path()} does not export the agent API of hetccl_agent.h (missing "
                f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}): this library predates it")
    return _fns


# ---- arguments -----------------------------------------------------------------------------------------

def _cstr(value, what):
    """A name argument -> NUL-terminated bytes (the library checks length and characters)."""
    if isinstance(value, bytes):
        b = value
    elif isinstance(value, str):
        try:
            b = value.encode("ascii")
        except UnicodeEncodeError:
            raise InvalidArgumentError(f"{what}={value!r}: agent names are ASCII ([A-Za-z0-9._:-])", 4) from None
    else:
        raise TypeError(f"{what} must be a str, got {value!r}")
    if b"\0" in b:
        raise InvalidArgumentError(f"{what}={value!r} contains a NUL character", 4)
    return b


def _bytes(value, what):
    """A bytes-like argument (bytes, bytearray, memoryview, any buffer) -> bytes."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        raise TypeError(f"{what} must be bytes, got a str (encode it)")
    try:
        return memoryview(value).tobytes()
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, got {type(value).__name__}") from None


def _secret(secret):
    """secret= -> the bytes for hetcclAgentOptions_t.secret. Bytes-like: as they are. A str: hex digits (>= 32, any
    case) decoded to bytes, as the library decodes HETCCL_SECRET (hetccl_agent.h): agents given secret=s and
    agents started with HETCCL_SECRET=s trust each other (test_agent.py's test_secret_from_environment)."""
    if isinstance(secret, str):
        if len(secret) < 32 or len(secret) % 2 or any(c not in "0123456789abcdefABCDEF" for c in secret):
            raise InvalidArgumentError("secret: a str secret is an even number of hex digits, at least 32, as in "
                                       "HETCCL_SECRET (give raw key bytes as bytes)", 4)
        return bytes.fromhex(secret)
    return _bytes(secret, "secret")


def _op(op):
    try:
        return _OPS[op.lower() if isinstance(op, str) else op]
    except (KeyError, TypeError):
        raise InvalidArgumentError(f"op={op!r}: expected 'read' or 'write' (hetccl.READ / hetccl.WRITE)", 4) from None
