"""Where the DDP step time of backend "hetccl" goes (torchrun, 2 processes, one GPU each): for all-reduces of
25 MiB of bf16 (one DDP bucket) and of 8 bytes, through the "hetccl" group, a "nccl" group, and hetccl's own
Python API (Communicator.all_reduce on a stream): the host time per call (the call returning, nothing waited
for) and the time per call once the GPU finished (20 calls, then a synchronize).
  torchrun --nproc-per-node 2 bench/gpu/torch_backend_probe.py
"""
import os
import time

import torch
import torch.distributed as dist

import hetccl
import hetccl.torch_backend  # noqa: F401

rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
dev = torch.device("cuda", local)
torch.cuda.set_device(dev)
dist.init_process_group("hetccl")
nccl = dist.new_group(backend="nccl")
pg = dist.distributed_c10d._get_default_group()
comm = pg.comm


def timed(call, n=20):
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6


for nbytes in (8, 25 << 20):
    x = torch.ones(nbytes // 2, dtype=torch.bfloat16, device=dev)
    s = torch.cuda.current_stream(dev)
    rows = {
        "hetccl backend": lambda: dist.all_reduce(x, async_op=True),
        "nccl backend": lambda: dist.all_reduce(x, group=nccl, async_op=True),
        "hetccl Communicator": lambda: comm.all_reduce(x, hetccl.SUM, stream=s),
    }
    for name, call in rows.items():
        host, total = timed(call)
        if rank == 0:
            print(f"{nbytes:>9} B  {name:<20} host {host:9.1f} us/call   with the GPU {total:9.1f} us/call", flush=True)
if os.environ.get("PROBE_PROFILE"):  # where a backend call's host time goes (rank 0, 8 B, 50 calls)
    import cProfile
    import pstats
    x = torch.ones(4, dtype=torch.bfloat16, device=dev)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(50):
        dist.all_reduce(x, async_op=True)
    torch.cuda.synchronize()
    prof.disable()
    if rank == 0:
        pstats.Stats(prof).sort_stats("tottime").print_stats(14)
dist.barrier()
hetccl.torch_backend.shutdown()
