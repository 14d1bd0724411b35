"""torch.distributed backend (torch_backend.py): torch dtypes and ReduceOps to hetccl's, and the flat,
contiguous, detached views of tensors that the Communicator is given (staged copies for non-contiguous
tensors, written back after the call). Imports torch: only torch_backend.py imports this module."""

from __future__ import annotations

import torch
import torch.distributed as dist

from ._types import AVG, MAX, MIN, PROD, SUM

#: torch dtypes hetccl reduces (its int8, uint8, int32, int64, float16, bfloat16, float32, float64; torch 1.13
#: has no uint32/uint64/float8). Every other dtype (bool, int16, complex, ...) moves as bytes in the calls
#: that do not reduce and is refused with TypeError by the reducing ones.
REDUCIBLE = frozenset((torch.int8, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                       torch.float32, torch.float64))
_REDUCIBLE_NAMES = "int8, uint8, int32, int64, float16, bfloat16, float32, float64"

_R = dist.ReduceOp.RedOpType
OPS = {_R.SUM: SUM, _R.PRODUCT: PROD, _R.MIN: MIN, _R.MAX: MAX, _R.AVG: AVG}


def hetccl_op(reduce_op, call):
    """opts.reduceOp (a ReduceOp, or a RedOpType) -> hetccl's op; NotImplementedError (a RuntimeError) for
    the ops hetccl does not have."""
    kind = getattr(reduce_op, "op", reduce_op)
    op = OPS.get(kind)
    if op is not None:
        return op
    name = getattr(kind, "name", repr(kind))
    if kind == _R.PREMUL_SUM:
        raise NotImplementedError(
            f"hetccl backend: {call} with ReduceOp.PREMUL_SUM: torch {torch.__version__} keeps the factor of "
            "_make_nccl_premul_sum's op in C++, out of a Python backend's reach; multiply before a SUM instead "
            "(or use hetccl.Communicator.premul_sum directly)")
    raise NotImplementedError(f"hetccl backend: {call} does not support ReduceOp.{name} (hetccl has SUM, PRODUCT, "
                              "MIN, MAX, AVG)")


def check_reducible(t, call):
    if t.dtype not in REDUCIBLE:
        raise TypeError(f"hetccl backend: {call} cannot reduce tensors of dtype {t.dtype} (hetccl reduces "
                        f"{_REDUCIBLE_NAMES})")


def same_dtype(tensors, call):
    ts = [t for t in tensors if t is not None]
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            raise TypeError(f"hetccl backend: {call}: tensors of different dtypes ({ts[0].dtype} and {t.dtype})")


def same_device(tensors, call):
    ts = [t for t in tensors if t is not None]
    for t in ts[1:]:
        if t.device != ts[0].device:
            raise ValueError(f"hetccl backend: {call}: tensors on different devices ({ts[0].device} and {t.device})")


class Flat:
    """A tensor as the Communicator takes it: `wire` is 1-D, contiguous and detached (so that __dlpack__
    accepts a parameter that requires grad); a non-contiguous tensor is staged in a contiguous copy that
    done() writes back (outputs only). Dtypes hetccl does not know travel as their bytes (uint8: DLPack
    has no bool in torch 1.13), so the element count of `wire` is numel * itemsize for those."""

    __slots__ = ("wire", "_staged", "_dst")

    def __init__(self, t, *, write=False):
        t = t.detach()
        if t.is_contiguous():
            self._staged, self._dst = None, None
            flat = t.reshape(-1)
        else:
            self._staged = t.contiguous()
            self._dst = t if write else None
            flat = self._staged.reshape(-1)
        self.wire = flat if t.dtype in REDUCIBLE else flat.view(torch.uint8)

    @property
    def staged(self) -> bool:
        return self._staged is not None

    def done(self):
        if self._dst is not None:
            self._dst.copy_(self._staged)


def stream_of(t):
    """The stream a device tensor's call is enqueued on: torch's current stream of its device (None for host
    memory: the call completes before it returns)."""
    if t.device.type == "cuda":
        return torch.cuda.current_stream(t.device)
    return None
