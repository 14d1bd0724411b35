#!/usr/bin/env python3
"""KV-cache block transfer benchmark (issue 16): one batched RMA get of N block ids against the copy ceiling
and torch.distributed send/recv of the same bytes, measured in the same run.

    hetccl-run -n 2 -- python3 bench/kv_transfer_bench.py --device cpu                 # shm RMA links
    hetccl-run -n 2 --host-ids 2 -- python3 bench/kv_transfer_bench.py --device cpu    # as two hosts: tcp
    hetccl-run -n 2 --domains 2 -- python3 bench/kv_transfer_bench.py --device cuda --blocks 1024 --heads 32
    HETCCL_SECRET=$(openssl rand -hex 16) torchrun --nproc_per_node 2 bench/kv_transfer_bench.py --device cuda

Cache layout (7B-class model: 32 layers, 32 KV heads x head_dim 128, fp16, 16-token blocks):
  --layout layer (default; vLLM-style paged cache): the cache is [layers][blocks][K|V][16 tokens][heads][head_dim];
      one (layer, block) page holds that block's K and V adjacent: 2 x 16 x 32 x 128 x 2 B = 256 KiB. One block id
      is `layers` ranges (one per layer, stride blocks x 256 KiB), so a get of N block ids is layers x N ranges.
  --layout block: [blocks][layers][K|V][16][heads][head_dim]: one block id is ONE contiguous range of
      layers x 256 KiB = 8 MiB.
  The puller's buffer holds the N pulled blocks packed in the same order ([layers][N] or [N][layers]).

Rank 0 owns the cache (registered) and the ceiling; rank 1 pulls N random block ids (a random order, not
sorted: few ranges are adjacent) with ONE get_batch, timed per call (warm-up, then median and p90 over the
repetitions). Every byte is checked once per size, outside the timing (each 8-byte word of the cache holds
a function of its index, so a misplaced range is found too). Baselines, same bytes, same run:
  ceiling (cpu): rank 0 gathers the same ranges from its registered cache into another buffer in one process
      (numpy take along the block axis: one memcpy per range) -- a memory-bandwidth ceiling for one process.
  ceiling (cuda): min(pinned device->host, pinned host->device) bandwidth of one contiguous copy of the same
      bytes on rank 0's GPU: the bound of a path that must stage device memory through host memory (two
      domains). The device-side gather of the same ranges (torch.index_select) is listed for reference.
  torch: the gathered blocks packed into one tensor (packed outside the timing), rank 0 send / rank 1 recv
      (gloo for CPU tensors; nccl for CUDA tensors when the ranks are on different GPUs; else gloo through
      pinned host copies, the D2H and H2D copies inside the timing).
  overhead: get_batch of 1 tiny range from Python vs the same hetcclGetBatch + hetcclRequestWait +
      hetcclRequestFree called directly through ctypes (the "C call"; its ctypes crossing is listed).
GB/s are 1e9 bytes per second of payload.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from kv_bench.runner import Bench  # noqa: E402  (bench/kv_bench: the benchmark's parts)

DEFAULT_SIZES = [1, 4, 16, 64, 256, 1024]


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--heads", type=int, default=None, help="KV heads (default: 32 cuda, 8 cpu)")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--blocks", type=int, default=None, help="blocks in rank 0's cache (default: 1024 cuda, 256 cpu)")
    ap.add_argument("--layout", choices=["layer", "block"], default="layer")
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                    help="block ids per get (capped by --blocks)")
    ap.add_argument("--reps", type=int, default=30, help="most timed repetitions per size")
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--budget-mb", type=float, default=4096,
                    help="per size and method, repetitions = clamp(budget / bytes, min-reps, reps)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--torch", choices=["auto", "gloo", "nccl", "none"], default="auto",
                    help="torch.distributed baseline backend (auto: nccl for CUDA ranks on different GPUs, else gloo)")
    ap.add_argument("--overhead-calls", type=int, default=2000)
    ap.add_argument("--json", default=None, help="write the results as JSON here (rank 0)")
    ap.add_argument("--md", default=None, help="write the markdown report here too (rank 0)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corrupt", action="store_true", help=argparse.SUPPRESS)  # the checks must report it
    a = ap.parse_args()
    if a.heads is None:
        a.heads = 32 if a.device == "cuda" else 8
    if a.blocks is None:
        a.blocks = 1024 if a.device == "cuda" else 256
    return a


def main():
    b = Bench(parse())
    b.run()
    if getattr(b, "failed", False):
        print("kv_transfer_bench: WRONG data received (see the check column)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
