"""Data types and reduction operators: DataType, ReduceOp (SUM ... AVG), the op= argument, PreMulSumOp."""

from __future__ import annotations

import ctypes
import enum
import operator
import struct

from . import _lib
from ._errors import ArgumentOverflowError, InvalidArgumentError
from ._library import check


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


def _index(value, name):
    try:
        return operator.index(value)  # ints and NumPy integers; a float is refused, not truncated
    except TypeError:
        raise TypeError(f"{name} must be an int, got {value!r}") from None


def _uint(value, name, bits=64):
    """An unsigned C argument (size_t, uint64_t): checked here, as ctypes wraps 2**64 + 8 to 8 and -1 to
    2**64 - 1 without a word."""
    v = _index(value, name)
    if v < 0:
        raise InvalidArgumentError(f"{name}={v} is negative", 4)
    if v >> bits:
        raise ArgumentOverflowError(f"{name}={v} does not fit in {bits} bits (at most {(1 << bits) - 1})", 4)
    return v


def _int32(value, name):
    """A C int argument (ranks, colors, keys), range-checked (ctypes wraps 2**32 + 1 to 1)."""
    v = _index(value, name)
    if not -(1 << 31) <= v < 1 << 31:
        raise ArgumentOverflowError(f"{name}={v} does not fit in a C int", 4)
    return v


def _rank(value, call, name="root"):
    """A rank argument (root, peer) -> int. An op there is refused: reduce(x, hetccl.MAX) ran a SUM to
    rank 2 and broadcast(x, hetccl.PROD) broadcast from rank 1 (ReduceOp is an int)."""
    if isinstance(value, (ReduceOp, PreMulSumOp)) or (isinstance(value, str) and value.lower() in _OP_NAMES):
        raise TypeError(f"{call}: {name}={value!r} is a reduction op, not a rank: the signature is "
                        f"{call}(buf, {name}=0{', op=SUM' if call == 'reduce' else ''}, ...); pass the op as op=")
    if isinstance(value, bool):
        raise TypeError(f"{call}: {name}={value!r} is a bool, not a rank")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{call}: {name} must be a rank (an int), got {value!r}") from None
    return _int32(v, f"{call}: {name}")


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
