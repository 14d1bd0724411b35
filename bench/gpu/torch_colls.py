#!/usr/bin/env python3
"""Bus bandwidth of PyTorch's own backends (NCCL, Gloo) for several collectives in one launch, the
baselines of the scaling benchmark (bench/gpu/run_scaling_bench.sh): one torchrun start per backend
instead of one per collective.

Run under torchrun, one process per GPU:
  torchrun --standalone --nproc_per_node=8 torch_colls.py --backend nccl
  NCCL_P2P_DISABLE=1 torchrun ... --backend nccl      # NCCL's host-memory path
  torchrun ... --backend gloo --max-bytes 256M        # Gloo on CUDA tensors (host-staged)
  NCCL_NET=Socket torchrun ... --backend nccl --as-hosts 2   # ranks as 2 hosts: NCCL's socket path between them

Sizes follow nccl-tests (and hetccl-perf): the size of a row is the largest buffer of the call (the output
of all_gather, the input of reduce_scatter); busbw = algbw x the nccl-tests factor. float32 data unless
--dtype float16 / bfloat16.
Output, rank 0, one line per collective and size (the format summarize_device_bench.parse_torch reads):
  nccl  cuda all_reduce        1048576 B        20.1 us  algbw    52.10  busbw    91.18 GB/s
Every call's result is checked once per size (all ones in -> exact sums out); a wrong result exits 1.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

COLLS = ["all_reduce", "all_gather", "reduce_scatter", "alltoall"]


def bus_factor(coll, n):
    return 2 * (n - 1) / n if coll == "all_reduce" else (n - 1) / n


def parse_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def make_call(coll, size, n, dev, dtype=torch.float32):
    """(call, expected value of the output, output tensor) for `size` bytes."""
    esize = torch.tensor([], dtype=dtype).element_size()
    elems = max(n, size // esize // n * n)  # the largest buffer, a multiple of n elements
    kw = {"device": dev, "dtype": dtype}
    if coll == "all_reduce":
        x = torch.ones(elems, **kw)
        return (lambda: dist.all_reduce(x)), None, x
    if coll == "all_gather":
        x = torch.ones(elems // n, **kw)
        out = torch.empty(elems, **kw)
        return (lambda: dist.all_gather_into_tensor(out, x)), 1.0, out
    if coll == "reduce_scatter":
        x = torch.ones(elems, **kw)
        out = torch.empty(elems // n, **kw)
        return (lambda: dist.reduce_scatter_tensor(out, x)), float(n), out
    x = torch.ones(elems, **kw)
    out = torch.empty(elems, **kw)
    return (lambda: dist.all_to_all_single(out, x)), 1.0, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="nccl")
    p.add_argument("--colls", default=",".join(COLLS), help="comma-separated, from " + ",".join(COLLS))
    p.add_argument("-b", "--min-bytes", default="1K")
    p.add_argument("-e", "--max-bytes", default="1G")
    p.add_argument("-f", type=int, default=4, help="size multiplier")
    p.add_argument("-n", type=int, default=20, help="timed iterations")
    p.add_argument("-w", type=int, default=5, help="warm-up iterations")
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--as-hosts", type=int, default=0,
                   help="K > 0: rank r acts as host r %% K for NCCL (NCCL_HOSTID), so that NCCL connects the "
                        "'hosts' through its network transport (sockets with NCCL_NET=Socket), as hetccl-run "
                        "--host-ids K does for hetccl")
    a = p.parse_args()
    if a.as_hosts > 0:
        os.environ["NCCL_HOSTID"] = f"h{int(os.environ['RANK']) % a.as_hosts}"

    dtype = getattr(torch, a.dtype)
    colls = a.colls.split(",")
    if any(c not in COLLS for c in colls):
        sys.exit(f"unknown collective in --colls {a.colls}")
    dist.init_process_group(a.backend)
    r, n = dist.get_rank(), dist.get_world_size()
    # Local rank modulo the GPUs present: on one GPU every rank shares GPU 0 (Gloo only; NCCL refuses it).
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", r)) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    for coll in colls:
        size = parse_bytes(a.min_bytes)
        while size <= parse_bytes(a.max_bytes):
            call, want, out = make_call(coll, size, n, dev, dtype)
            call()
            torch.cuda.synchronize()
            # all_reduce in place: one call on ones gives n everywhere (later calls keep multiplying).
            expect = float(n) if want is None else want
            if not torch.all(out == expect):
                print(f"rank {r}: {coll} {size} B: wrong result (want {expect})", flush=True)
                sys.exit(1)
            for _ in range(a.w):
                call()
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(a.n):
                call()
            torch.cuda.synchronize()
            dt = (time.perf_counter() - t) / a.n
            nbytes = out.numel() * out.element_size() * (n if coll == "reduce_scatter" else 1)
            algbw = nbytes / dt / 1e9
            if r == 0:
                print(f"{a.backend:5s} cuda {coll:14s} {nbytes:12d} B  {dt * 1e6:10.1f} us  "
                      f"algbw {algbw:8.2f}  busbw {algbw * bus_factor(coll, n):8.2f} GB/s", flush=True)
            del call, out
            size *= a.f
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
