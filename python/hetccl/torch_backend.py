"""hetccl as a torch.distributed backend named "hetccl" (a Python ProcessGroup over hetccl.Communicator).

    import torch.distributed as dist
    import hetccl.torch_backend                  # registers the backend (idempotent); imports torch

    dist.init_process_group("hetccl")            # env:// under torchrun: RANK, WORLD_SIZE, MASTER_ADDR/PORT
    dist.init_process_group("hetccl", store=store, rank=rank, world_size=n)   # or any torch Store
    g = dist.new_group(ranks, backend="hetccl")  # sub-groups: one communicator each
    ...
    dist.destroy_process_group()

`import hetccl` alone never imports torch. The communicator is built from the torch Store the group gets:
rank 0 calls hetccl.get_unique_id() (its process runs the rendezvous root) and `store.set`s the 128-byte id,
the other ranks `store.get` it, then every rank joins with hetccl.Communicator(id, world_size, rank). So it
works under torchrun (or any init_method) without hetccl-run and without HETCCL_SECRET. The id is a
credential of the job: anyone who can read the store can join the communicator (torch's TCPStore has no
authentication; keep its port inside the job's network). GPU ranks: hetccl binds a rank to the device
current at init, so call torch.cuda.set_device(local_rank) before init_process_group, as for NCCL.

torch 1.13 has no device-mapped backend strings: "cpu:gloo,cuda:hetccl" is refused by Backend() ("Invalid
backend"); make a Gloo group and a hetccl group instead (dist.new_group(backend="gloo")).

Supported (torch.distributed function -> hetccl):
  all_reduce (SUM, PRODUCT, MIN, MAX, AVG; integer AVG truncates), broadcast, reduce (the other ranks'
  tensors are left unchanged), all_gather (list), all_gather_into_tensor / _all_gather_base, reduce_scatter
  (list), reduce_scatter_tensor / _reduce_scatter_base, all_to_all (list), all_to_all_single (with and
  without split sizes), gather, scatter (point-to-point in one hetccl group), barrier, send / recv / isend /
  irecv / batch_isend_irecv with a source rank, all_reduce_coalesced; DDP (torch.nn.parallel
  .DistributedDataParallel) on it.
Dtypes: reductions on int8, uint8, int32, int64, float16, bfloat16, float32, float64 (others raise TypeError
  naming the dtype; complex SUM works, torch passes it as its real view); the calls that only move data take
  every dtype (bool, int16, complex, ... move as bytes). Non-contiguous tensors are staged in contiguous
  copies (outputs written back).
Not supported (NotImplementedError, a RuntimeError): ReduceOp.PREMUL_SUM (torch 1.13 keeps the factor of
  _make_nccl_premul_sum's op in C++, out of a Python backend's reach), BAND/BOR/BXOR, recv from any source
  (irecv/recv without src), tags other than 0 (hetccl matches point-to-point calls by peer and order),
  several tensors per process (the *_multigpu forms), monitored_barrier.
Timeout: the `timeout` torch passes is kept as `pg.timeout` only. hetccl has no per-communicator timeout:
  HETCCL_TIMEOUT (seconds, default 300, read once per process) bounds every wait; a peer that dies or stays
  silent surfaces as hetccl.RemoteError naming it.
Errors: hetccl's exceptions (hetccl.HetcclError subclasses, RuntimeErrors) raise out of the torch call.

Work (what async_op=True returns; _torch_work.py): host tensors complete before the call returns, so the
Work is done at once (wait() returns True, is_completed() is True, get_future() is a completed
torch.futures.Future holding the output tensors). isend/irecv (and batch_isend_irecv's) are deferred: they
run together, in one hetccl group, at the first wait()/get_future()/result() of any of them, at the end of
batch_isend_irecv, or before the group's next other call -- so an isend and an irecv between two ranks
cannot block each other. Calls made by torch's C++ (DDP) get torch's own C++ work over a completed future.

CUDA tensors (tested on 2 x H100 with torch 2.11: bench/results/torch_backend_h100x2_2026-11-27): the call
runs on this group's communication stream of the tensor's device, which first waits for the caller's current
stream (the tensors are recorded on it for the caching allocator), as ProcessGroupNCCL does; the Work records
an event after it; wait() makes the current stream wait for it and raises the communicator's asynchronous
error if there is one; is_completed() queries the event; the future's value is stream-ordered. barrier() is
a host barrier (it does not wait for device work). Per call the wrapper costs ~130 us of host time more than
hetccl.Communicator (DDP step 0.60x NCCL's there).

Teardown: pg.shutdown() (hetccl.torch_backend.shutdown(group)) destroys the communicator collectively (every
rank, same order). Without it the communicator is aborted when the group is garbage-collected or at exit,
as torch 1.13's ProcessGroupNCCL aborts its communicators.
"""

from __future__ import annotations

import torch.distributed as dist

from ._comm import Communicator, get_unique_id
from ._torch_pg import BACKEND_NAME, ProcessGroupHetccl
from ._torch_work import Work

__all__ = ["BACKEND_NAME", "ProcessGroupHetccl", "Work", "communicator_from_store", "create_process_group",
           "register", "shutdown"]

UNIQUE_ID_KEY = "hetccl/unique_id"


def communicator_from_store(store, rank: int, size: int) -> Communicator:
    """Rank 0 makes the unique id and publishes it in `store` (a torch.distributed Store, already prefixed
    per group by torch); the others read it (store.get waits for it up to the store's timeout)."""
    if rank == 0:
        uid = get_unique_id()
        store.set(UNIQUE_ID_KEY, uid)
    else:
        uid = store.get(UNIQUE_ID_KEY)
    return Communicator(bytes(uid), size, rank)


def create_process_group(opts, pg_options=None):
    """The creator torch calls for init_process_group("hetccl") and new_group(backend="hetccl") (torch's
    extended creator API: `opts` carries the store, rank, size, timeout and the group's name). The group is
    given its name: torch 2.x's destroy_process_group reads it (without it: "ProcessGroup name not set")."""
    pg = ProcessGroupHetccl(communicator_from_store(opts.store, opts.group_rank, opts.group_size), opts.timeout)
    pg._group_name = opts.group_id
    return pg


def register():
    """Registers the backend under BACKEND_NAME; doing it again does nothing."""
    if BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND_NAME, create_process_group, extended_api=True)


def shutdown(group=None):
    """Destroys the communicator of a hetccl group (the default group when None) collectively."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupHetccl):
        raise TypeError(f"shutdown: {pg!r} is not a hetccl process group")
    pg.shutdown()


register()
