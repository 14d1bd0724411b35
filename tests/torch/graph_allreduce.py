"""torch.cuda.graph over hetccl's drop-in: an all_reduce captured once and replayed with fresh inputs,
an eager all_reduce between replays, exact every time.

    RANK_DOMAINS=2 RANK_PRELOAD=$PWD/build/dropin/libnccl.so.2 torchrun --standalone --nproc_per_node 2 \\
        --no_python bash tests/torch/rank_env.sh python3 tests/torch/graph_allreduce.py

Prints "graph_allreduce: rank R: OK ..." and exits 0, else 1.
"""
import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dist.init_process_group("nccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    replays = int(os.environ.get("REPLAYS", "8"))
    x = torch.zeros(3 << 20, device="cuda")  # 12 MiB: several chunks of the stream pipeline
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch asks
        for _ in range(2):
            dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(x)
    wrong = 0
    for i in range(1, replays + 1):
        x.copy_(torch.arange(x.numel(), device="cuda", dtype=torch.float32) % 7 + (rank + 1) * i)
        graph.replay()
        y = torch.full((4096,), float(i + rank), device="cuda")
        dist.all_reduce(y)  # an eager call between replays
        torch.cuda.synchronize()
        want_x = (torch.arange(x.numel(), device="cuda", dtype=torch.float32) % 7) * n + i * n * (n + 1) / 2
        wrong += int((x != want_x).sum().item()) + int((y != (i * n + n * (n - 1) / 2)).sum().item())
    print(f"graph_allreduce: rank {rank}: {'OK' if wrong == 0 else 'FAIL'} ({replays} replays of "
          f"{x.numel()} floats, {wrong} wrong elements)", flush=True)
    dist.destroy_process_group()
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
