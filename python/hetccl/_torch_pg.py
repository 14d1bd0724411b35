"""torch.distributed backend (torch_backend.py): ProcessGroupHetccl, a Python subclass of torch's
ProcessGroup over one hetccl.Communicator.

Method names and arguments are those of torch 1.13's ProcessGroup bindings (what torch.distributed's
functions call, and what its C++ reaches through the PyProcessGroup trampoline: allreduce, broadcast,
allgather, reduce_scatter, barrier, send, recv, getBackendName). Every call takes one tensor (list) per
process, as torch 1.13's functions pass it.
"""

from __future__ import annotations

import functools
import sys
import weakref

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as _c10d

from ._errors import HetcclError
from ._group import group as _hetccl_group
from ._torch_types import Flat, check_reducible, hetccl_op, same_device, same_dtype, stream_of
from ._torch_work import Work, cpp_work

BACKEND_NAME = "hetccl"
_C10D_GLOBALS = vars(_c10d)
_OWN_GLOBALS = globals()


def _from_c10d() -> bool:
    """True when the calling method was called by torch.distributed's Python functions (which keep the
    returned Work alive), False for torch's C++ (DDP) and any other caller (_torch_work.py says why). Frames
    of this module (the comm-stream wrapper, a method calling another) are skipped; torch's C++ may call from
    a thread with no Python frame at all (the autograd engine's device threads run DDP's reducer)."""
    f = sys._getframe(1)
    while f is not None and f.f_globals is _OWN_GLOBALS:
        f = f.f_back
    return f is not None and f.f_globals is _C10D_GLOBALS


def _cuda_tensors(args):
    """The CUDA tensors among a call's arguments (tensors, lists of them, lists of lists)."""
    for a in args:
        if isinstance(a, torch.Tensor):
            if a.is_cuda:
                yield a
        elif isinstance(a, (list, tuple)):
            yield from _cuda_tensors(a)


def _on_comm_stream(method):
    """Runs a call on CUDA tensors on the group's communication stream of their device, as ProcessGroupNCCL
    does: that stream first waits for the caller's current stream (so the call sees every earlier write),
    the tensors are recorded as used on it (the caching allocator does not hand their memory out before the
    call ends), and the Work / future wait for it. The caller's stream is free to run the next computation
    while the collective runs: DDP overlaps gradient all-reduces with the backward pass this way."""
    @functools.wraps(method)
    def on_stream(self, *args, **kwargs):
        tensors = list(_cuda_tensors(args))
        if not tensors:
            return method(self, *args, **kwargs)
        device = tensors[0].device
        caller = torch.cuda.current_stream(device)
        stream, ready = self._comm_stream(device)
        ready.record(caller)  # one cached event (the per-call Event and context manager objects of
        stream.wait_event(ready)  # Stream.wait_stream / torch.cuda.stream() cost host time on DDP's thread)
        for t in tensors:
            t.record_stream(stream)
        torch.cuda.set_stream(stream)
        try:
            return method(self, *args, **kwargs)
        finally:
            torch.cuda.set_stream(caller)
    return on_stream


def _one(tensors, call):
    if isinstance(tensors, torch.Tensor):
        return tensors
    if len(tensors) != 1:
        raise NotImplementedError(f"hetccl backend: {call} takes one tensor per process (got {len(tensors)}: "
                                  "the multi-GPU-per-process forms are not supported)")
    return tensors[0]


def _op_of(opts):
    if opts is None:
        return dist.ReduceOp.SUM
    return getattr(opts, "reduceOp", opts)


def _root_of(opts, call):
    if isinstance(opts, int):
        return opts
    if getattr(opts, "rootTensor", 0) != 0:
        raise NotImplementedError(f"hetccl backend: {call} with rootTensor={opts.rootTensor} (one tensor per process)")
    return opts.rootRank


def _unwire(chunk, dtype):
    """A slice of a staging buffer back in the tensor's dtype (unknown dtypes were moved as uint8)."""
    return chunk if chunk.dtype == dtype else chunk.view(dtype)


def _abort(comm):
    try:
        comm.abort()
    except HetcclError:
        pass


class ProcessGroupHetccl(dist.ProcessGroup):
    """A torch.distributed process group over `comm` (a hetccl.Communicator; the group owns it). Made by the
    backend's creator (torch_backend.py) from init_process_group / new_group. `timeout` is kept as
    `.timeout` only: hetccl's waits are bounded by HETCCL_TIMEOUT (process-wide)."""

    def __init__(self, comm, timeout=None):
        super().__init__(comm.rank, comm.size)
        self.comm = comm
        self.timeout = timeout
        self._queue = []  # deferred point-to-point calls: (is_send, Flat, tensor, peer, stream, Work)
        self._streams = {}  # CUDA device -> this group's communication stream there (_on_comm_stream)
        self._group_name = None  # set by the creator (torch 2.x reads it: group_name below)
        # Not shut down explicitly: abort when the group is garbage-collected or at exit (as torch 1.13's
        # ProcessGroupNCCL aborts its communicators on destruction); abort does not wait for the others.
        self._finalizer = weakref.finalize(self, _abort, comm)

    def __repr__(self):
        return f"<ProcessGroupHetccl rank {self.rank()} of {self.size()}: {self.comm!r}>"

    def getBackendName(self):  # noqa: N802 - torch's name
        return BACKEND_NAME

    @property
    def group_name(self):
        """torch 2.x keeps a group's name in its C++ backends, which a Python group has none of ("ProcessGroup
        name not set" from destroy_process_group): the name torch gave the creator."""
        return self._group_name if self._group_name is not None else super().group_name

    def _comm_stream(self, device):
        """(this group's communication stream on `device`, the event its calls record on the caller's stream)"""
        pair = self._streams.get(device)
        if pair is None:
            pair = self._streams[device] = (torch.cuda.Stream(device=device), torch.cuda.Event())
        return pair

    def shutdown(self):
        """Runs the deferred point-to-point calls, then destroys the communicator (collective: every rank of
        the group calls it, in the same order for several groups). The group is unusable afterwards."""
        self._flush()
        self._finalizer.detach()
        self.comm.destroy()

    def abort(self):
        """Frees the communicator without waiting for the other ranks (after an error)."""
        self._finalizer.detach()
        self.comm.abort()

    # -- helpers --

    def _work(self, result, t, stream, py, op, source_rank=-1):
        if py:
            return Work(result, t.device if t is not None else None, stream, comm=self.comm, op=op,
                        source_rank=source_rank)
        return cpp_work(result, t.device if t is not None else None, stream, current=True)

    def _flush(self):
        """Runs the deferred point-to-point calls in one hetccl group, in call order (so that an isend and an
        irecv between the same ranks do not wait for each other); fails their Works on an error."""
        queue, self._queue = self._queue, []
        if not queue:
            return
        try:
            with _hetccl_group():
                for is_send, f, _, peer, stream, _ in queue:
                    if is_send:
                        self.comm.send(f.wire, peer, stream=stream)
                    else:
                        self.comm.recv(f.wire, peer, stream=stream)
        except BaseException as e:  # noqa: BLE001 - each Work carries it; a KeyboardInterrupt goes on up
            for *_, w in queue:
                w._fail(e)
            if not isinstance(e, Exception):
                raise
            return
        for _, f, _, _, _, w in queue:
            f.done()
            w._complete()

    def _p2p(self, is_send, tensors, peer, tag, py):
        call = "send" if is_send else "recv"
        t = _one(tensors, call)
        if tag:
            raise NotImplementedError(f"hetccl backend: {call} with tag={tag}: hetccl matches point-to-point calls "
                                      "by peer and call order, not by tag; pass tag=0")
        if not 0 <= peer < self.size():
            raise ValueError(f"hetccl backend: {call}: peer {peer} is not a rank of this group of {self.size()}")
        f = Flat(t, write=not is_send)
        s = stream_of(t)
        if py:  # deferred until a wait(), get_future() or another call of this group runs it
            w = Work([t], t.device, s, comm=self.comm, pending=self._flush, op=call,
                     source_rank=-1 if is_send else peer)
            self._queue.append((is_send, f, t, peer, s, w))
            return w
        self._flush()
        if is_send:
            self.comm.send(f.wire, peer, stream=s)
        else:
            self.comm.recv(f.wire, peer, stream=s)
            f.done()
        return cpp_work([t], t.device, s, current=True)

    # -- collectives --

    @_on_comm_stream
    def allreduce(self, tensors, opts=None):
        py = _from_c10d()
        t = _one(tensors, "allreduce")
        op = hetccl_op(_op_of(opts), "allreduce")
        check_reducible(t, "allreduce")
        self._flush()
        f = Flat(t, write=True)
        s = stream_of(t)
        self.comm.all_reduce(f.wire, op, stream=s)
        f.done()
        return self._work([t], t, s, py, "allreduce")

    @_on_comm_stream
    def allreduce_coalesced(self, tensors, opts=None):
        py = _from_c10d()
        op = hetccl_op(_op_of(opts), "allreduce_coalesced")
        same_device(tensors, "allreduce_coalesced")
        for t in tensors:
            check_reducible(t, "allreduce_coalesced")
        self._flush()
        s = stream_of(tensors[0]) if tensors else None
        for t in tensors:
            f = Flat(t, write=True)
            self.comm.all_reduce(f.wire, op, stream=s)
            f.done()
        return self._work(list(tensors), tensors[0] if tensors else None, s, py, "allreduce_coalesced")

    @_on_comm_stream
    def broadcast(self, tensors, opts=None):
        py = _from_c10d()
        t = _one(tensors, "broadcast")
        root = _root_of(opts, "broadcast")
        self._flush()
        f = Flat(t, write=True)
        s = stream_of(t)
        self.comm.broadcast(f.wire, root, stream=s)
        f.done()
        return self._work([t], t, s, py, "broadcast")

    @_on_comm_stream
    def reduce(self, tensors, opts=None):
        py = _from_c10d()
        t = _one(tensors, "reduce")
        if isinstance(opts, int):  # reduce(tensor, root, op) overload, called directly
            root, op = opts, dist.ReduceOp.SUM
        else:
            root, op = _root_of(opts, "reduce"), _op_of(opts)
        op = hetccl_op(op, "reduce")
        check_reducible(t, "reduce")
        self._flush()
        f = Flat(t, write=self.rank() == root)
        s = stream_of(t)
        self.comm.reduce(f.wire, root, op, stream=s)
        f.done()
        return self._work([t], t, s, py, "reduce")

    @_on_comm_stream
    def allgather(self, output_tensors, input_tensors, opts=None):
        py = _from_c10d()
        t = _one(input_tensors, "allgather")
        outs = _one(output_tensors, "allgather") if not isinstance(output_tensors[0], torch.Tensor) else output_tensors
        if len(outs) != self.size():
            raise ValueError(f"hetccl backend: allgather: {len(outs)} output tensors for a group of {self.size()}")
        same_dtype([t, *outs], "allgather")
        same_device([t, *outs], "allgather")
        for o in outs:
            if o.numel() != t.numel():
                raise ValueError(f"hetccl backend: allgather: an output tensor has {o.numel()} elements, the input "
                                 f"{t.numel()}")
        self._flush()
        inp = Flat(t)
        s = stream_of(t)
        n = inp.wire.numel()
        buf = torch.empty(self.size() * n, dtype=inp.wire.dtype, device=t.device)
        self.comm.all_gather(inp.wire, buf, stream=s)
        for i, o in enumerate(outs):
            o.copy_(_unwire(buf[i * n:(i + 1) * n], o.dtype).reshape(o.shape))
        return self._work(list(outs), t, s, py, "allgather")

    @_on_comm_stream
    def allgather_coalesced(self, output_lists, input_list, opts=None):
        py = _from_c10d()
        if len(output_lists) != len(input_list):
            raise ValueError("hetccl backend: allgather_coalesced: one output list per input tensor")
        self._flush()
        for outs, t in zip(output_lists, input_list):
            self.allgather([outs], [t])
        flat = [o for outs in output_lists for o in outs]
        t0 = input_list[0] if input_list else None
        return self._work(flat, t0, stream_of(t0) if t0 is not None else None, py, "allgather_coalesced")

    @_on_comm_stream
    def _allgather_base(self, output, input, opts=None):  # noqa: A002 - torch's name
        py = _from_c10d()
        same_dtype([output, input], "_allgather_base")
        same_device([output, input], "_allgather_base")
        if output.numel() != self.size() * input.numel():
            raise ValueError(f"hetccl backend: _allgather_base (all_gather_into_tensor): output has {output.numel()} "
                             f"elements, expected {self.size()} ranks x {input.numel()}")
        self._flush()
        o, i = Flat(output, write=True), Flat(input)
        s = stream_of(output)
        self.comm.all_gather(i.wire, o.wire, stream=s)
        o.done()
        return self._work([output], output, s, py, "_allgather_base")

    @_on_comm_stream
    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        py = _from_c10d()
        t = _one(output_tensors, "reduce_scatter")
        ins = _one(input_tensors, "reduce_scatter") if not isinstance(input_tensors[0], torch.Tensor) \
            else input_tensors
        op = hetccl_op(_op_of(opts), "reduce_scatter")
        if len(ins) != self.size():
            raise ValueError(f"hetccl backend: reduce_scatter: {len(ins)} input tensors for a group of {self.size()}")
        same_dtype([t, *ins], "reduce_scatter")
        same_device([t, *ins], "reduce_scatter")
        check_reducible(t, "reduce_scatter")
        for x in ins:
            if x.numel() != t.numel():
                raise ValueError(f"hetccl backend: reduce_scatter: an input tensor has {x.numel()} elements, the "
                                 f"output {t.numel()}")
        self._flush()
        send = torch.cat([x.detach().reshape(-1) for x in ins]) if ins else t.new_empty(0)
        out = Flat(t, write=True)
        s = stream_of(t)
        self.comm.reduce_scatter(send, out.wire, op, stream=s)
        out.done()
        return self._work([t], t, s, py, "reduce_scatter")

    @_on_comm_stream
    def _reduce_scatter_base(self, output, input, opts=None):  # noqa: A002 - torch's name
        py = _from_c10d()
        op = hetccl_op(_op_of(opts), "_reduce_scatter_base")
        same_dtype([output, input], "_reduce_scatter_base")
        same_device([output, input], "_reduce_scatter_base")
        check_reducible(output, "_reduce_scatter_base")
        if input.numel() != self.size() * output.numel():
            raise ValueError(f"hetccl backend: _reduce_scatter_base (reduce_scatter_tensor): input has "
                             f"{input.numel()} elements, expected {self.size()} ranks x {output.numel()}")
        self._flush()
        o, i = Flat(output, write=True), Flat(input)
        s = stream_of(output)
        self.comm.reduce_scatter(i.wire, o.wire, op, stream=s)
        o.done()
        return self._work([output], output, s, py, "_reduce_scatter_base")

    def _split_counts(self, t, wire, splits, what):
        """Element counts (of `wire`) per rank from split sizes along dim 0 (empty: equal parts)."""
        dim0 = t.shape[0] if t.dim() else 1
        row = wire.numel() // dim0 if dim0 else 0
        n = self.size()
        if not splits:
            if dim0 % n:
                raise ValueError(f"hetccl backend: all_to_all_single: {what} has {dim0} rows along dim 0, not a "
                                 f"multiple of {n} ranks (pass split sizes)")
            return [dim0 // n * row] * n
        splits = list(splits)
        if len(splits) != n or any(x < 0 for x in splits) or sum(splits) != dim0:
            raise ValueError(f"hetccl backend: all_to_all_single: {what} split sizes {splits} must be {n} "
                             f"non-negative sizes adding up to its {dim0} rows")
        return [x * row for x in splits]

    @_on_comm_stream
    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):  # noqa: A002
        py = _from_c10d()
        same_dtype([output, input], "all_to_all_single")
        same_device([output, input], "all_to_all_single")
        self._flush()
        o, i = Flat(output, write=True), Flat(input)
        s = stream_of(output)
        if not output_split_sizes and not input_split_sizes and i.wire.numel() == o.wire.numel():
            self._split_counts(input, i.wire, [], "input")  # checks the rows divide
            self.comm.all_to_all(i.wire, o.wire, stream=s)
        else:
            sc = self._split_counts(input, i.wire, input_split_sizes, "input")
            rc = self._split_counts(output, o.wire, output_split_sizes, "output")
            self.comm.all_to_allv(i.wire, sc, o.wire, rc, stream=s)
        o.done()
        return self._work([output], output, s, py, "alltoall_base")

    @_on_comm_stream
    def alltoall(self, output_tensors, input_tensors, opts=None):
        py = _from_c10d()
        n = self.size()
        if len(output_tensors) != n or len(input_tensors) != n:
            raise ValueError(f"hetccl backend: all_to_all: {len(input_tensors)} input and {len(output_tensors)} output "
                             f"tensors for a group of {n}: one per rank each")
        same_dtype([*output_tensors, *input_tensors], "all_to_all")
        same_device([*output_tensors, *input_tensors], "all_to_all")
        self._flush()
        t0 = input_tensors[0]
        ins = [Flat(x).wire for x in input_tensors]
        send = torch.cat(ins)
        sc = [x.numel() for x in ins]
        rc = [Flat(x).wire.numel() for x in output_tensors]  # numel in wire units
        recv = torch.empty(sum(rc), dtype=send.dtype, device=t0.device)
        s = stream_of(t0)
        self.comm.all_to_allv(send, sc, recv, rc, stream=s)
        off = 0
        for x, c in zip(output_tensors, rc):
            x.copy_(_unwire(recv[off:off + c], x.dtype).reshape(x.shape))
            off += c
        return self._work(list(output_tensors), t0, s, py, "alltoall")

    def _root_exchange(self, to_root, root, blocks, mine, s):
        """gather (to_root) and scatter: the root receives blocks[p] from (gather) or sends it to (scatter) every
        other rank p, all in one hetccl group, and copies its own block between `mine` and blocks[root]; any
        other rank sends (gather) or receives (scatter) `mine` alone. `blocks` is used on the root only."""
        me, n = self.rank(), self.size()
        if me != root:
            if to_root:
                self.comm.send(mine, root, stream=s)
            else:
                self.comm.recv(mine, root, stream=s)
            return
        if n > 1:
            with _hetccl_group():
                for p in range(n):
                    if p != root:
                        if to_root:
                            self.comm.recv(blocks[p], p, stream=s)
                        else:
                            self.comm.send(blocks[p], p, stream=s)
        if to_root:
            blocks[root].copy_(mine)
        else:
            mine.copy_(blocks[root])

    @_on_comm_stream
    def gather(self, output_tensors, input_tensors, opts=None):
        py = _from_c10d()
        t = _one(input_tensors, "gather")
        root = _root_of(opts, "gather")
        me, n = self.rank(), self.size()
        outs = []
        if me == root:
            outs = _one(output_tensors, "gather") if output_tensors and not isinstance(output_tensors[0],
                                                                                       torch.Tensor) else output_tensors
            if len(outs) != n:
                raise ValueError(f"hetccl backend: gather: {len(outs)} output tensors on the root for a group of {n}")
            same_dtype([t, *outs], "gather")
            same_device([t, *outs], "gather")
            for o in outs:
                if o.numel() != t.numel():
                    raise ValueError(f"hetccl backend: gather: an output tensor has {o.numel()} elements, the input "
                                     f"{t.numel()}")
        self._flush()
        inp = Flat(t)
        s = stream_of(t)
        fo = [Flat(o, write=True) for o in outs]  # the root's only
        self._root_exchange(True, root, [f.wire for f in fo], inp.wire, s)
        for f in fo:
            f.done()
        return self._work(list(outs), t, s, py, "gather")

    @_on_comm_stream
    def scatter(self, output_tensors, input_tensors, opts=None):
        py = _from_c10d()
        t = _one(output_tensors, "scatter")
        root = _root_of(opts, "scatter")
        me, n = self.rank(), self.size()
        ins = []
        if me == root:
            ins = _one(input_tensors, "scatter") if input_tensors and not isinstance(input_tensors[0],
                                                                                     torch.Tensor) else input_tensors
            if len(ins) != n:
                raise ValueError(f"hetccl backend: scatter: {len(ins)} input tensors on the root for a group of {n}")
            same_dtype([t, *ins], "scatter")
            same_device([t, *ins], "scatter")
            for x in ins:
                if x.numel() != t.numel():
                    raise ValueError(f"hetccl backend: scatter: an input tensor has {x.numel()} elements, the output "
                                     f"{t.numel()}")
        self._flush()
        out = Flat(t, write=True)
        s = stream_of(t)
        self._root_exchange(False, root, [Flat(x).wire for x in ins], out.wire, s)  # ins: the root's only
        out.done()
        return self._work([t], t, s, py, "scatter")

    def barrier(self, opts=None):
        """A host barrier over the group (for CUDA: device work already enqueued is not waited for)."""
        py = _from_c10d()
        self._flush()
        self.comm.barrier()
        return self._work([], None, None, py, "barrier")

    # -- point-to-point --

    @_on_comm_stream
    def send(self, tensors, dstRank, tag=0):  # noqa: N803 - torch's names
        return self._p2p(True, tensors, dstRank, tag, _from_c10d())

    @_on_comm_stream
    def recv(self, tensors, srcRank, tag=0):  # noqa: N803
        return self._p2p(False, tensors, srcRank, tag, _from_c10d())

    def recv_anysource(self, tensors, tag=0):
        raise NotImplementedError("hetccl backend: recv from any source (dist.recv/irecv without src) is not "
                                  "supported: hetccl matches point-to-point calls by peer; pass src=")

    # dist.batch_isend_irecv: the deferred point-to-point calls run together when the batch ends
    def _start_coalescing(self):
        pass

    def _end_coalescing(self, reqs=None):
        self._flush()
