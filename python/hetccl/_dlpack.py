"""DLPack, parsed here: any object with __dlpack__ / __dlpack_device__ (NumPy, PyTorch, CuPy, JAX, ...)
becomes (address, element count, hetccl type, device, stream) without copying, and the capsule is kept
by the caller for as long as the C call needs the memory.

The capsule is never "consumed" (not renamed to used_dltensor): when the caller drops it, the capsule's
own destructor calls the producer's deleter, as the DLPack protocol specifies for unconsumed capsules.
Objects without __dlpack__ but with the buffer protocol (bytearray, memoryview, array.array, bytes for
read-only uses) are accepted too, as host memory.
"""

from __future__ import annotations

import ctypes
import re
import struct
import sys

from ._errors import DtypeError, InvalidArgumentError

# DLDeviceType
kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLROCMHost, kDLCUDAManaged = 1, 2, 3, 10, 11, 13
HOST_DEVICES = frozenset((kDLCPU, kDLCUDAHost, kDLROCMHost))
GPU_DEVICES = frozenset((kDLCUDA, kDLROCM, kDLCUDAManaged))
DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal",
                9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon", 17: "kDLMAIA"}

# DLDataTypeCode
kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 3, 4, 5, 6
kDLFloat8_e4m3fn, kDLFloat8_e5m2 = 10, 12
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque", 4: "bfloat", 5: "complex", 6: "bool",
               7: "float8_e3m4", 8: "float8_e4m3", 9: "float8_e4m3b11fnuz", 10: "float8_e4m3fn",
               11: "float8_e4m3fnuz", 12: "float8_e5m2", 13: "float8_e5m2fnuz", 14: "float8_e8m0fnu"}


def _key(code, bits, lanes=1):
    return code | bits << 8 | lanes << 16


# DLDataType (as one little-endian u32: code | bits << 8 | lanes << 16) -> hetcclDataType_t
DTYPE_TO_HETCCL = {
    _key(kDLInt, 8): 0, _key(kDLUInt, 8): 1, _key(kDLInt, 32): 2, _key(kDLUInt, 32): 3,
    _key(kDLInt, 64): 4, _key(kDLUInt, 64): 5, _key(kDLFloat, 16): 6, _key(kDLFloat, 32): 7,
    _key(kDLFloat, 64): 8, _key(kDLBfloat, 16): 9, _key(kDLFloat8_e4m3fn, 8): 10, _key(kDLFloat8_e5m2, 8): 11,
}
NO_TYPE = -1  # a dtype hetccl cannot reduce: moved as bytes by the collectives that do not reduce


def dtype_name(key):
    """A DLPack dtype key's name ("float32"), or a buffer format that has no DLPack type (a str key:
    structured records, long double, ...) as "buffer format 'T{i:a:d:b:}'"."""
    if isinstance(key, str):
        return f"buffer format {key!r}"
    code, bits, lanes = key & 0xFF, key >> 8 & 0xFF, key >> 16
    name = f"{_CODE_NAMES.get(code, f'code{code}')}{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


_pyapi = ctypes.pythonapi
_IsValid = _pyapi.PyCapsule_IsValid
_IsValid.restype = ctypes.c_int
_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_GetPointer = _pyapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_string_at = ctypes.string_at

# DLTensor: data, device_type, device_id, ndim, dtype (u32), shape, strides, byte_offset -- 48 bytes
_TENSOR = struct.Struct("=QiiiIQQQ")
_TENSOR_SIZE = _TENSOR.size
_VERSIONED_FLAGS = struct.Struct("=Q")
_FLAG_READ_ONLY = 1
_I64 = struct.Struct("=q")


# export() returns a plain tuple (cheaper than an object; indices used by _comm and _rma):
PTR, COUNT, HTYPE, ITEMSIZE, DEV_TYPE, DEV_ID, KEEP, STREAM, DKEY = range(9)
View = tuple


def _describe(obj):
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


# ---- streams -------------------------------------------------------------------------------------

def stream_handle(stream):
    """An explicit stream argument -> its handle (int): an int, an object with __cuda_stream__ (CUDA
    stream protocol: returns (version, handle)), .cuda_stream (torch.cuda.Stream) or .ptr (cupy)."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    cs = getattr(stream, "__cuda_stream__", None)
    if cs is not None:
        v = cs() if callable(cs) else cs
        return int(v[1]) if isinstance(v, tuple) else int(v)
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v
    raise InvalidArgumentError(f"stream={stream!r}: expected an int handle or an object with __cuda_stream__ or "
                               ".cuda_stream")


def producer_stream(obj, dev_type, dev_id):
    """The producer's current stream on its device (the default when no stream= is given): torch's and
    cupy's current stream; 0 (the default stream) for other producers."""
    mod = type(obj).__module__
    if mod.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is not None:
            return int(torch.cuda.current_stream(dev_id).cuda_stream)
    elif mod.startswith("cupy"):
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            return int(cupy.cuda.get_current_stream().ptr)
    return 0


def _dlpack_stream_arg(handle, dev_type):
    # DLPack's stream argument: CUDA 1 = legacy default stream (0 is not allowed), ROCm 0 = default.
    if dev_type == kDLROCM:
        return handle
    return handle if handle else 1


# ---- export --------------------------------------------------------------------------------------

def export(obj, stream=None, writable=True, what="buffer"):
    """obj -> View. `stream`: None (the producer's current stream), an int handle or a stream object.
    Raises InvalidArgumentError for what hetccl cannot use: other devices, non-contiguous layouts, a
    read-only buffer where the call writes."""
    try:
        dev = obj.__dlpack_device__()
    except AttributeError:
        if not hasattr(obj, "__dlpack__"):
            return _from_buffer(obj, writable, what)
        dev = (kDLCPU, 0)
    dev_type = dev[0]
    if dev_type in HOST_DEVICES:
        s = None
        try:
            cap = obj.__dlpack__()
        except (BufferError, TypeError, ValueError) as e:
            if dev_type == kDLCPU:  # NumPy < 2 refuses read-only and bool arrays: use them as a buffer
                try:
                    return _from_buffer(obj, writable, what)
                except InvalidArgumentError as e2:
                    if isinstance(e2, DtypeError) or "read-only" in str(e2):
                        raise e2 from None
            raise InvalidArgumentError(f"{what} ({_describe(obj)}) cannot be exported through DLPack: {e}") from None
    elif dev_type in GPU_DEVICES:
        s = stream_handle(stream) if stream is not None else producer_stream(obj, dev_type, dev[1])
        try:
            cap = obj.__dlpack__(stream=_dlpack_stream_arg(s, dev_type))
        except (BufferError, TypeError, ValueError) as e:
            raise InvalidArgumentError(f"{what} ({_describe(obj)}) cannot be exported through DLPack: {e}") from None
    else:
        raise InvalidArgumentError(f"{what} ({_describe(obj)}) lives on device type "
                                   f"{DEVICE_NAMES.get(dev_type, dev_type)}: hetccl takes host memory "
                                   "(kDLCPU, kDLCUDAHost, kDLROCMHost) or GPU memory (kDLCUDA, kDLROCM, kDLCUDAManaged)")
    if _IsValid(cap, b"dltensor"):
        tptr = _GetPointer(cap, b"dltensor")
        readonly = False
    elif _IsValid(cap, b"dltensor_versioned"):
        base = _GetPointer(cap, b"dltensor_versioned")
        readonly = bool(_VERSIONED_FLAGS.unpack(_string_at(base + 24, 8))[0] & _FLAG_READ_ONLY)
        tptr = base + 32
    else:
        raise InvalidArgumentError(f"{what} ({_describe(obj)}): __dlpack__ did not return a DLPack capsule "
                                   "(named dltensor or dltensor_versioned)")
    data, dev_type, dev_id, ndim, dkey, shape, strides, offset = _TENSOR.unpack(_string_at(tptr, _TENSOR_SIZE))
    if ndim == 1:
        count = _I64.unpack(_string_at(shape, 8))[0]
        if strides and count > 1 and _I64.unpack(_string_at(strides, 8))[0] != 1:
            raise InvalidArgumentError(f"{what} ({_describe(obj)}) is not contiguous (1-D, stride "
                                       f"{_I64.unpack(_string_at(strides, 8))[0]} elements): pass a contiguous "
                                       "array, e.g. np.ascontiguousarray(x) / x.contiguous(), and copy back")
    elif ndim == 0:
        count = 1
    else:
        dims = struct.unpack(f"={ndim}q", _string_at(shape, 8 * ndim))
        count = 1
        for d in dims:
            count *= d
        if strides and count > 1:
            st = struct.unpack(f"={ndim}q", _string_at(strides, 8 * ndim))
            expect = 1
            for d, s_ in zip(reversed(dims), reversed(st)):
                if d != 1 and s_ != expect:
                    raise InvalidArgumentError(
                        f"{what} ({_describe(obj)}) is not contiguous (shape {list(dims)}, strides {list(st)} "
                        "elements; row-major contiguous memory is needed): pass a contiguous array, e.g. "
                        "np.ascontiguousarray(x) / x.contiguous(), and copy back")
                expect *= d
    if readonly and writable:
        raise InvalidArgumentError(f"{what} ({_describe(obj)}) is read-only but this call writes into it")
    htype = DTYPE_TO_HETCCL.get(dkey, NO_TYPE)
    bits, lanes = dkey >> 8 & 0xFF, dkey >> 16
    if dkey & 0xFF == kDLOpaqueHandle:
        raise DtypeError(f"{what} ({_describe(obj)}) has dtype {dtype_name(dkey)}: opaque handles (pointers "
                         "into this process) cannot be communicated")
    if htype == NO_TYPE and (bits * lanes) % 8:
        raise InvalidArgumentError(f"{what} ({_describe(obj)}) has dtype {dtype_name(dkey)}: elements that are not "
                                   "whole bytes cannot be moved")
    itemsize = bits * lanes // 8
    return (data + offset, count, htype, itemsize, dev_type, dev_id, cap, s, dkey)


_FORMATS = {"b": _key(kDLInt, 8), "B": _key(kDLUInt, 8), "c": _key(kDLUInt, 8), "?": _key(kDLBool, 8),
            "h": _key(kDLInt, 16), "H": _key(kDLUInt, 16), "i": _key(kDLInt, 32), "I": _key(kDLUInt, 32),
            "q": _key(kDLInt, 64), "Q": _key(kDLUInt, 64), "e": _key(kDLFloat, 16), "f": _key(kDLFloat, 32),
            "d": _key(kDLFloat, 64), "Zf": _key(kDLComplex, 64), "Zd": _key(kDLComplex, 128)}


_FIELD_NAMES = re.compile(r":[^:]*:")  # a record's field names inside its format: T{i:a:=d:b:}


def _from_buffer(obj, writable, what):
    try:
        mv = memoryview(obj)
    except TypeError:
        raise InvalidArgumentError(f"{what} ({_describe(obj)}) has neither __dlpack__ nor the buffer protocol: "
                                   "pass a NumPy array, a torch tensor or any DLPack object") from None
    if not mv.c_contiguous:
        raise InvalidArgumentError(f"{what} ({_describe(obj)}) is not contiguous")
    fmt = mv.format.lstrip("@=<")
    if fmt in ("l", "L"):
        fmt = {"l": "q", "L": "Q"}[fmt] if mv.itemsize == 8 else {"l": "i", "L": "I"}[fmt]
    if "O" in _FIELD_NAMES.sub("", fmt):  # Python objects (alone or in a record): pointers, never data
        raise DtypeError(f"{what} ({_describe(obj)}) has buffer format {mv.format!r}: an array of Python objects "
                         "cannot be communicated (its elements are pointers into this process); pass numbers")
    # Formats without a DLPack type (records, long double, void, strings): their key is the format itself,
    # so that they move as bytes where the call does not reduce and are refused where it does.
    dkey = _FORMATS.get(fmt, fmt)
    itemsize = mv.itemsize
    count = mv.nbytes // itemsize if itemsize else 0
    if mv.readonly:
        if writable:
            raise InvalidArgumentError(f"{what} ({_describe(obj)}) is read-only but this call writes into it")
        keep = ctypes.create_string_buffer(mv.tobytes(), mv.nbytes) if mv.nbytes else ctypes.c_char()
    else:
        keep = (ctypes.c_char * mv.nbytes).from_buffer(mv.cast("B")) if mv.nbytes else ctypes.c_char()
    ptr = ctypes.addressof(keep)
    return (ptr, count, DTYPE_TO_HETCCL.get(dkey, NO_TYPE), itemsize, kDLCPU, 0, keep, None, dkey)
