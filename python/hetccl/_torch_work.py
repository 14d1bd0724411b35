"""torch.distributed backend (torch_backend.py): the Work objects its calls return.

Two kinds, because of torch 1.13's bindings (torch/csrc/distributed/c10d/PyProcessGroup.hpp):

- Called from torch.distributed's Python functions (dist.all_reduce(..., async_op=True), dist.isend, ...),
  a call returns a `Work`, this module's Python subclass of torch's Work: wait(), is_completed(),
  is_success(), exception(), get_future(), result(), source_rank(), synchronize().
- Called from torch's C++ (DDP's Reducer and its parameter checks, _broadcast_coalesced), the Python Work
  would not survive: pybind11 drops the Python object as soon as the override returns, and torch's C++ then
  calls the base class's wait(), which waits forever (seen: DDP's constructor hung in
  _verify_params_across_processes). There the call returns torch's own C++ work over a completed
  torch.futures.Future (torch._C._distributed_c10d._create_work_from_future): its wait(), get_future() and
  result() are C++ (torch 1.13's Work.exception() cannot convert its result to Python for any C++ work,
  Gloo's included).

Completion. Host (CPU) tensors: the hetccl call has completed when the backend call returns, so the Work is
complete at once. CUDA tensors (tested on H100, torch 2.11): the call runs on the group's communication
stream; the Work records a CUDA event after it; wait() makes the then-current stream wait for that event (as
ProcessGroupNCCL's does) and raises the communicator's asynchronous error, if any; is_completed() queries
the event. Point-to-point calls from dist.isend/irecv/send/recv/batch_isend_irecv are deferred (see
ProcessGroupHetccl): such a Work is pending until the group runs them.
"""

from __future__ import annotations

import torch
from torch._C._distributed_c10d import Work as _TorchWork
from torch._C._distributed_c10d import _create_work_from_future


def _new_future(device):
    if device is not None and device.type == "cuda":
        return torch.futures.Future(devices=[device])
    return torch.futures.Future()


def _set_result(fut, result, stream, current=False):
    """Completes `fut`; for CUDA, with the events recorded on `stream` (the call's), so that a consumer of
    the value waits for the collective, not for whatever stream is current now. current=True: `stream` is
    the current stream already (inside a call, _torch_pg._on_comm_stream)."""
    if stream is None or current:
        fut.set_result(result)
    else:
        with torch.cuda.stream(stream):
            fut.set_result(result)


def cpp_work(result, device, stream, current=False):
    """torch's C++ work over a completed future holding `result` (for callers in C++)."""
    fut = _new_future(device)
    _set_result(fut, result, stream, current)
    return _create_work_from_future(fut)


class Work(_TorchWork):
    """The Work of a call of the hetccl backend made from torch.distributed's Python functions."""

    def __init__(self, result, device=None, stream=None, *, comm=None, pending=None, source_rank=-1, op=""):
        super().__init__()
        self._result = list(result)
        self._device = device
        self._stream = stream
        self._comm = comm
        self._pending = pending  # the group's flush function while this point-to-point call waits in its queue
        self._source = source_rank
        self._op = op
        self._exc = None
        self._event = None
        self._future = _new_future(device)
        if pending is None:
            self._complete(current=True)  # made inside a call: its stream is the current one

    def __repr__(self):
        state = "pending" if self._pending else ("failed" if self._exc else "done")
        return f"<hetccl.torch_backend.Work {self._op} {state}>"

    # -- called by the process group --

    def _complete(self, current=False):
        self._pending = None
        if self._stream is not None:
            self._event = torch.cuda.Event()
            self._event.record(self._stream)
        _set_result(self._future, self._result, self._stream, current)

    def _fail(self, exc):
        self._pending = None
        self._exc = exc
        self._future.set_exception(exc)

    def _run_pending(self):
        if self._pending is not None:
            self._pending()  # runs every queued point-to-point call of the group: completes or fails this one

    def _async_error(self):
        if self._exc is None and self._comm is not None and self._event is not None:
            err = self._comm.async_error()
            if err is not None:
                self._exc = err
        return self._exc

    # -- torch's Work API --

    def is_completed(self) -> bool:
        """Non-blocking. False while a deferred point-to-point call waits for the group to run it; for CUDA,
        whether the enqueued call has finished on the device."""
        if self._pending is not None:
            return False
        if self._event is not None:
            return self._exc is not None or self._event.query()
        return True

    def is_success(self) -> bool:
        """Non-blocking: False when the call failed (so far: a pending call has not failed yet)."""
        return self._async_error() is None

    def exception(self):
        """The exception the call failed with, or None."""
        return self._async_error()

    def wait(self, timeout=None) -> bool:
        """Runs the deferred point-to-point calls when this is one, raises the call's exception if it failed;
        for CUDA makes the current stream wait for the call. `timeout` is not used: HETCCL_TIMEOUT bounds
        every wait of hetccl."""
        self._run_pending()
        if self._exc is not None:
            raise self._exc
        if self._event is not None:
            torch.cuda.current_stream(self._device).wait_event(self._event)
            err = self._async_error()
            if err is not None:
                raise err
        return True

    def synchronize(self):
        self.wait()

    def get_future(self):
        """A torch.futures.Future completed with the call's output tensors (a list), or with its exception.
        Runs the deferred point-to-point calls when this is one."""
        self._run_pending()
        return self._future

    def result(self):
        """The output tensors (a list), after wait()."""
        self.wait()
        return list(self._result)

    def source_rank(self) -> int:
        if self._source < 0:
            raise RuntimeError("hetccl backend: source_rank() exists for the Work of a recv only")
        return self._source

    def _source_rank(self) -> int:
        return self.source_rank()
