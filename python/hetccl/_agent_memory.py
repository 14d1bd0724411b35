"""Agent registrations: the memory behind a Python object (buffer protocol, NumPy / CUDA array interfaces,
DLPack) and AgentMemory, one registration of it."""

from __future__ import annotations

import contextlib
import ctypes
import sys

from ._agent_api import _f
from ._dlpack import GPU_DEVICES, export
from ._errors import InvalidArgumentError, InvalidUsageError
from ._library import check
from ._rma import MEM_KINDS
from ._types import _uint


# ---- memory of an object -------------------------------------------------------------------------------

def _interface_view(ai, what, gpu):
    """(address, nbytes, keep) from an __array_interface__ / __cuda_array_interface__ dict (C-contiguous)."""
    data = ai.get("data")
    if not isinstance(data, tuple) or data[0] is None:
        raise InvalidArgumentError(f"{what}: its array interface gives no data pointer", 4)
    ptr, readonly = int(data[0]), bool(data[1])
    if readonly:
        raise InvalidArgumentError(f"{what} is read-only but peers may write into a registration", 4)
    typestr = ai["typestr"]
    itemsize = int(typestr[2:])
    shape = tuple(ai["shape"])
    n = 1
    for d in shape:
        n *= d
    strides = ai.get("strides")
    if strides is not None and n > 1:
        expect = itemsize
        for d, s in zip(reversed(shape), reversed(tuple(strides))):
            if d != 1 and s != expect:
                raise InvalidArgumentError(f"{what} is not contiguous (shape {list(shape)}, strides {list(strides)} "
                                           "bytes): pass a contiguous array", 4)
            expect *= d
    ptr += int(ai.get("offset", 0) or 0)
    return ptr, n * itemsize, gpu


def _device_of(obj):
    """torch exports a CUDA tensor through DLPack only while its device is the current one (a tensor of
    another GPU of the process raises): the export runs under that device. Other objects: no context."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor) and obj.is_cuda:
        return torch.cuda.device(obj.device)
    return contextlib.nullcontext()


def _memory_of(obj, device, what="registered buffer"):
    """(address, nbytes, keep) of obj's memory: DLPack objects and the buffer protocol through _dlpack.export
    (as communicators do), else __cuda_array_interface__ (device memory) or __array_interface__ (host)."""
    if not hasattr(obj, "__dlpack__"):
        cai = getattr(obj, "__cuda_array_interface__", None)
        if cai is not None:
            if device < 0:
                raise InvalidUsageError(f"{what} is GPU memory (__cuda_array_interface__) but this agent was created "
                                        "with device=-1 (host memory only)", 5)
            ptr, n, _ = _interface_view(cai, what, True)
            return ptr, n, obj
        try:
            memoryview(obj)
        except TypeError:
            ai = getattr(obj, "__array_interface__", None)
            if ai is not None:
                ptr, n, _ = _interface_view(ai, what, False)
                return ptr, n, obj
    with _device_of(obj):
        v = export(obj, None, True, what)
    if v[4] in GPU_DEVICES:
        if device < 0:
            raise InvalidUsageError(f"{what} is GPU memory (device {v[5]}) but this agent was created with device=-1 "
                                    "(host memory only)", 5)
        if v[5] != device:
            raise InvalidArgumentError(f"{what} is on device {v[5]} but this agent registers device {device}'s "
                                       "memory", 4)
    return v[0], v[1] * v[3], v


# ---- classes -------------------------------------------------------------------------------------------

class AgentMemory:
    """A registration of an Agent (hetcclAgentRegister): .id (the region id peers name it by, as listed in
    the agent's metadata), .kind ("host", "cuda", "hip"), .nbytes, .obj (the buffer, kept alive). Ended by
    deregister() or the agent's close(), not by dropping this object."""

    def __init__(self, agent, obj, nbytes=None):
        f = _f()
        h = agent._live()
        ptr, total, keep = _memory_of(obj, agent.device)
        n = total if nbytes is None else _uint(nbytes, "register: nbytes")
        if n <= 0 or n > total:
            raise InvalidArgumentError(f"register: nbytes {n} must be in [1, {total}] (the buffer's size)", 4)
        out, rid = ctypes.c_void_p(), ctypes.c_uint32()
        check(f.hetcclAgentRegister(h, ptr, n, ctypes.byref(out), ctypes.byref(rid)))
        self._m = out.value
        self._agent = agent
        self._keep = keep
        self.obj = obj
        self.id = rid.value
        self.kind, self.nbytes = "host", n
        agent._mems[self._m] = self  # peers may access it until deregister(): the agent keeps it (and obj)
        qid, kind, size = ctypes.c_uint32(), ctypes.c_int(), ctypes.c_size_t()
        check(f.hetcclAgentMemQuery(self._m, ctypes.byref(qid), ctypes.byref(kind), ctypes.byref(size)))
        self.kind = MEM_KINDS.get(kind.value, str(kind.value))
        self.nbytes = size.value

    def __repr__(self):
        return (f"<hetccl.AgentMemory region {self.id}, {self.kind}, {self.nbytes} bytes"
                f"{'' if self._m else ', deregistered'}>")

    @property
    def registered(self) -> bool:
        return bool(self._m) and self._agent._h is not None

    def deregister(self):
        """Ends the registration (peers' later accesses fail as stale) once the transfers using it ended (at
        most the agent's timeout), and releases the buffer. Idempotent; nothing to do after the agent's close()."""
        m, self._m = self._m, None
        if not m:
            return
        agent = self._agent
        agent._mems.pop(m, None)
        if agent._h is None:  # the agent was destroyed, and its registrations with it
            self._keep = self.obj = None
            return
        rc = _f().hetcclAgentDeregister(m)
        if rc:
            # The handle is released either way (hetccl_agent.h); a transfer may still touch the memory after
            # a failed wait: the agent keeps the buffer until it is closed.
            agent._zombies.append((self._keep, self.obj))
            self._keep = self.obj = None
            check(rc)
        self._keep = self.obj = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deregister()
        return False
