"""A rank of a torchrun-style job started by test_torch_backend_semantics.py (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT set; no hetccl-run variables, no HETCCL_SECRET): dist.init_process_group("hetccl") through env://,
then an all_reduce and an all_gather checked against values computed here. Prints "rank R of N: torch ok"."""

import sys

import torch
import torch.distributed as dist

import hetccl.torch_backend as tb


def main():
    dist.init_process_group("hetccl")  # env://: torch's TCPStore on MASTER_ADDR:MASTER_PORT carries hetccl's id
    rank, n = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "hetccl", dist.get_backend()
    x = torch.full((5,), float(rank + 1))
    dist.all_reduce(x)
    want = float(n * (n + 1) // 2)
    assert torch.equal(x, torch.full((5,), want)), x
    out = [torch.empty(3, dtype=torch.int64) for _ in range(n)]
    dist.all_gather(out, torch.arange(3) + 10 * rank)
    for p, o in enumerate(out):
        assert torch.equal(o, torch.arange(3) + 10 * p), (p, o)
    tb.shutdown()
    dist.destroy_process_group()
    print(f"rank {rank} of {n}: torch ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
