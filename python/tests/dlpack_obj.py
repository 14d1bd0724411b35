"""A minimal DLPack producer written with ctypes (not NumPy's): any dtype code, device type, strides,
legacy or versioned capsules, read-only flag. It records the stream each __dlpack__ call received and
counts how many of its capsules were released, so tests can check the binding's side of the protocol."""

import ctypes

import numpy as np


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # the dying capsule: not a py_object
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_NAME = b"dltensor"
_NAME_V = b"dltensor_versioned"


class DLObj:
    """DLPack view of `storage` (a NumPy array owning the bytes) as `shape` of (code, bits) elements."""

    def __init__(self, storage, shape, code, bits, device=(1, 0), strides=None, byte_offset=0, versioned=False,
                 readonly=False, lanes=1):
        self.storage = storage
        self.shape = tuple(shape)
        self.code, self.bits, self.lanes = code, bits, lanes
        self.device = device
        self.strides = strides
        self.byte_offset = byte_offset
        self.versioned = versioned
        self.readonly = readonly
        self.streams = []       # the stream argument of every __dlpack__ call
        self.exported = 0
        self.released = 0
        self._alive = {}
        self._callbacks = []    # never freed: a destructor thunk must outlive its own call

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(1, n))(*self.shape)
        strides = (ctypes.c_int64 * max(1, n))(*self.strides) if self.strides is not None else None
        t = DLTensor(self.storage.ctypes.data, self.device[0], self.device[1], n, self.code, self.bits, self.lanes,
                     ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                     ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None,
                     self.byte_offset)
        if self.versioned:
            m = DLManagedTensorVersioned(1, 0, None, DELETER(), 1 if self.readonly else 0, t)
            name = _NAME_V
        else:
            m = DLManagedTensor(t, None, DELETER())
            name = _NAME
        key = self.exported
        self.exported += 1

        def destroy(_cap, key=key):
            self.released += 1
            self._alive.pop(key, None)

        cb = _CAPSULE_DESTRUCTOR(destroy)
        self._callbacks.append(cb)
        self._alive[key] = (m, shape, strides)
        return _PyCapsule_New(ctypes.addressof(m), name, cb)


def bf16_bits(values):
    """float32 values -> bfloat16 bit patterns (exact for the small integers the tests use)."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# OCP fp8 encodings of small integers (exact)
FP8_E4M3 = {1: 0x38, 2: 0x40, 3: 0x44, 4: 0x48, 5: 0x4A, 6: 0x4C, 7: 0x4E, 8: 0x50}
FP8_E5M2 = {1: 0x3C, 2: 0x40, 3: 0x42, 4: 0x44, 5: 0x45, 6: 0x46, 7: 0x47, 8: 0x48}
