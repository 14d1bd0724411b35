"""Range lists of agent transfers: hetcclAgentRange_t rows from tuples, dicts, NumPy arrays (range_dtype() or
five integer columns) or strided runs (strided_ranges)."""

from __future__ import annotations

import ctypes
import sys

from ._agent_api import _RANGE_TYPES, RANGE_FIELDS, AgentRange, _f
from ._agent_memory import AgentMemory
from ._errors import ArgumentOverflowError, InvalidArgumentError
from ._library import check
from ._types import _uint

def range_dtype():
    """The NumPy dtype of hetcclAgentRange_t (32 bytes): a contiguous 1-D array of it goes to C as it is."""
    import numpy as np

    return np.dtype({"names": list(RANGE_FIELDS), "formats": ["<u4" if sys.byteorder == "little" else ">u4"] * 2
                     + ["<u8" if sys.byteorder == "little" else ">u8"] * 3, "offsets": [0, 4, 8, 16, 24],
                     "itemsize": 32})


def _native(typestr, kind_size):
    """typestr ('<u8', '|u1', '=u4') is the native form of kind_size ('u8')."""
    order = typestr[0]
    native = "<" if sys.byteorder == "little" else ">"
    return typestr[1:] == kind_size and (order in ("=", native) or (order == "|" and kind_size[1:] == "1"))


def _range_layout(ai):
    """True when an __array_interface__ describes a C-contiguous 1-D array of hetcclAgentRange_t."""
    descr = ai.get("descr") or []
    if len(ai["shape"]) != 1 or ai["typestr"] != "|V32" or len(descr) != 5:
        return False
    strides = ai.get("strides")
    if strides is not None and ai["shape"][0] > 1 and tuple(strides) != (32,):
        return False
    return all(len(d) == 2 and isinstance(d[1], str) and _native(d[1], t) for d, t in zip(descr, _RANGE_TYPES))


def _check_columns(np, cols, n):
    """Range-checks five integer columns (vectorised) and packs them into a hetcclAgentRange_t array."""
    names = ("local_region", "remote_region", "local_offset", "remote_offset", "bytes")
    for i, c in enumerate(cols):
        if c.dtype.kind not in "iu":
            raise InvalidArgumentError(f"ranges: column {names[i]} has dtype {c.dtype}: integers expected", 4)
        if c.dtype.kind == "i" and n and int(c.min()) < 0:
            raise InvalidArgumentError(f"ranges: a {names[i]} is negative ({int(c.min())})", 4)
        if i < 2 and n and c.dtype.itemsize > 4 and int(c.max()) >> 32:
            raise ArgumentOverflowError(f"ranges: a {names[i]} ({int(c.max())}) does not fit in 32 bits", 4)
    out = np.empty(n, range_dtype())
    for name, c in zip(RANGE_FIELDS, cols):
        out[name] = c
    return out


def _ranges_from_array(ranges, ai):
    if _range_layout(ai):  # already hetcclAgentRange_t[n]: its memory goes to C as it is
        return ai["data"][0], ai["shape"][0], ranges
    import numpy as np

    a = np.asarray(ranges)
    if a.dtype.names is not None and a.ndim == 1 and len(a.dtype.names) == 5:  # another record layout
        cols = [a[name] for name in a.dtype.names]
    elif a.ndim == 2 and a.shape[1] == 5:
        cols = [a[:, i] for i in range(5)]
    elif a.ndim == 1 and a.shape[0] == 5 and a.dtype.names is None:  # one range
        cols = [a[i:i + 1] for i in range(5)]
    else:
        raise InvalidArgumentError(f"ranges: expected an (n, 5) integer array (local_region, remote_region, "
                                   f"local_offset, remote_offset, bytes) or a 1-D array of hetccl.range_dtype(), "
                                   f"got shape {a.shape} dtype {a.dtype}", 4)
    out = _check_columns(np, cols, len(cols[0]))
    return out.ctypes.data, len(out), out


def _ranges(ranges):
    """(address, count, keep) of hetcclAgentRange_t[count] from: a ctypes array of AgentRange (strided_ranges),
    an array (NumPy) of range_dtype() layout (zero-copy), an (n, 5) integer array, or 5-tuples (local_region,
    remote_region, local_offset, remote_offset, bytes); a region may be given as its AgentMemory."""
    if isinstance(ranges, ctypes.Array) and ranges._type_ is AgentRange:
        return ctypes.addressof(ranges), len(ranges), ranges
    if isinstance(ranges, AgentRange):
        return ctypes.addressof(ranges), 1, ranges
    ai = getattr(ranges, "__array_interface__", None)
    if ai is not None:
        return _ranges_from_array(ranges, ai)
    rows = []
    for i, r in enumerate(ranges):
        r = tuple(r)
        if len(r) != 5:
            raise InvalidArgumentError(f"ranges[{i}]: expected (local_region, remote_region, local_offset, "
                                       f"remote_offset, bytes), got {r!r}", 4)
        lr, rr, lo, ro, n = r
        if isinstance(lr, AgentMemory):
            lr = lr.id
        rows.append((_uint(lr, f"ranges[{i}].local_region", 32), _uint(rr, f"ranges[{i}].remote_region", 32),
                     _uint(lo, f"ranges[{i}].local_offset"), _uint(ro, f"ranges[{i}].remote_offset"),
                     _uint(n, f"ranges[{i}].bytes")))
    if not rows:
        return None, 0, None
    arr = (AgentRange * len(rows))(*rows)
    return ctypes.addressof(arr), len(rows), arr


def strided_ranges(count: int, local_region, local_offset: int, local_stride: int, remote_region: int,
                   remote_offset: int, remote_stride: int, nbytes: int):
    """hetcclAgentStridedRanges: `count` ranges, range i moving `nbytes` between local_offset + i*local_stride
    of local_region and remote_offset + i*remote_stride of remote_region. Returns a ctypes array of
    AgentRange (prep_xfer takes it as it is; np.frombuffer(r, hetccl.range_dtype()) views it)."""
    f = _f()
    count = _uint(count, "count")
    if isinstance(local_region, AgentMemory):
        local_region = local_region.id
    arr = (AgentRange * count)()
    check(f.hetcclAgentStridedRanges(ctypes.addressof(arr) if count else None, count,
                                     _uint(local_region, "local_region", 32), _uint(local_offset, "local_offset"),
                                     _uint(local_stride, "local_stride"), _uint(remote_region, "remote_region", 32),
                                     _uint(remote_offset, "remote_offset"), _uint(remote_stride, "remote_stride"),
                                     _uint(nbytes, "nbytes")))
    return arr
