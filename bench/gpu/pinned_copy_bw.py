#!/usr/bin/env python3
"""Pinned host <-> device copy bandwidth of every visible GPU (the ceiling of a cross-domain collective:
each GPU's bytes cross its PCIe link). One 256 MiB pinned host tensor and one device tensor per GPU; each
direction is timed over one copy, repeated 5 times after a warm-up; the median is printed.

usage: pinned_copy_bw.py [--mb 256] [--reps 5]
Output, one line per GPU and direction (parsed by summarize_device_bench.py):
  pinned gpu 0 H2D 268435456 B median 55.31 GB/s (runs 55.2 55.3 ...)
"""
import argparse
import statistics
import time

import torch


def time_copy(dst, src, device):
    torch.cuda.synchronize(device)
    t = time.perf_counter()
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize(device)
    return time.perf_counter() - t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mb", type=int, default=256, help="bytes per copy, in MiB")
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    nbytes = a.mb << 20
    for g in range(torch.cuda.device_count()):
        dev = torch.device("cuda", g)
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        gpu = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        for name, dst, src in (("H2D", gpu, host), ("D2H", host, gpu)):
            time_copy(dst, src, dev)  # warm-up
            runs = [nbytes / time_copy(dst, src, dev) / 1e9 for _ in range(a.reps)]
            print(f"pinned gpu {g} {name} {nbytes} B median {statistics.median(runs):.2f} GB/s "
                  f"(runs {' '.join(f'{r:.1f}' for r in runs)})", flush=True)
        del host, gpu


if __name__ == "__main__":
    main()
