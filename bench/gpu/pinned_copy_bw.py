#!/usr/bin/env python3
"""Pinned host <-> device copy bandwidth of every visible GPU (the ceiling of a cross-domain collective:
each GPU's bytes cross its PCIe link). One 256 MiB pinned host tensor and one device tensor per GPU; each
direction is timed over one copy, repeated 5 times after a warm-up; the median is printed.

Then the ceilings a cross-domain all-reduce really meets: both directions of one GPU at once (BIDIR: the
D2H and H2D copies on two streams, per-direction GB/s), and both directions of every GPU at once (ALL:
host memory shared by all), per-direction GB/s per GPU.

usage: pinned_copy_bw.py [--mb 256] [--reps 5]
Output, one line per GPU and direction (parsed by summarize_device_bench.py):
  pinned gpu 0 H2D 268435456 B median 55.31 GB/s (runs 55.2 55.3 ...)
  pinned gpu 0 BIDIR 268435456 B median 50.10 GB/s (...)
  pinned gpu all ALL 268435456 B median 48.00 GB/s (...)
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
    bidirectional(nbytes, a.reps)


def time_concurrent(copies):
    """copies: (dst, src, stream) started together; seconds until all are done."""
    for _, _, s in copies:
        s.synchronize()
    t = time.perf_counter()
    for dst, src, s in copies:
        with torch.cuda.stream(s):
            dst.copy_(src, non_blocking=True)
    for _, _, s in copies:
        s.synchronize()
    return time.perf_counter() - t


def bidirectional(nbytes, reps):
    per_gpu = []
    for g in range(torch.cuda.device_count()):
        dev = torch.device("cuda", g)
        bufs = dict(h_in=torch.empty(nbytes, dtype=torch.uint8, pin_memory=True),
                    h_out=torch.empty(nbytes, dtype=torch.uint8, pin_memory=True),
                    d_in=torch.empty(nbytes, dtype=torch.uint8, device=dev),
                    d_out=torch.empty(nbytes, dtype=torch.uint8, device=dev))
        streams = (torch.cuda.Stream(dev), torch.cuda.Stream(dev))
        copies = [(bufs["d_in"], bufs["h_in"], streams[0]), (bufs["h_out"], bufs["d_out"], streams[1])]
        per_gpu.append(copies)
        time_concurrent(copies)
        runs = [nbytes / time_concurrent(copies) / 1e9 for _ in range(reps)]
        print(f"pinned gpu {g} BIDIR {nbytes} B median {statistics.median(runs):.2f} GB/s "
              f"(runs {' '.join(f'{r:.1f}' for r in runs)})", flush=True)
    everything = [c for copies in per_gpu for c in copies]
    time_concurrent(everything)
    runs = [nbytes / time_concurrent(everything) / 1e9 for _ in range(reps)]
    print(f"pinned gpu all ALL {nbytes} B median {statistics.median(runs):.2f} GB/s "
          f"(runs {' '.join(f'{r:.1f}' for r in runs)})", flush=True)


if __name__ == "__main__":
    main()
