#!/usr/bin/env python3
"""Report of bench/gpu/run_staged_net_bench.sh: median busbw per variant and size (hetccl-perf out of place
and in place; Gloo), and the ratios of the staged-in-pieces runs to today's whole-call staging and to Gloo.

  python3 bench/gpu/summarize_staged_net.py RAW_DIR > report.md
"""
import collections
import pathlib
import re
import statistics
import sys

ROW = re.compile(r"^\s+(\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")
GLOO = re.compile(r"^gloo\s+cuda\s+all_reduce\s+(\d+) B.*busbw\s+([\d.]+) GB/s")


def variant(name):
    return re.sub(r"_r\d+$", "", name)


def main():
    raw = pathlib.Path(sys.argv[1])
    oop = collections.defaultdict(lambda: collections.defaultdict(list))
    inp = collections.defaultdict(lambda: collections.defaultdict(list))
    gloo = {}
    for f in sorted(raw.glob("*.txt")):
        for line in f.read_text(errors="replace").splitlines():
            if m := ROW.match(line):
                size = int(m.group(1))
                oop[variant(f.stem)][size].append(float(m.group(4)))
                inp[variant(f.stem)][size].append(float(m.group(7)))
            elif m := GLOO.match(line):
                gloo[int(m.group(1))] = float(m.group(2))
    sizes = sorted({s for v in oop.values() for s in v})
    print("busbw GB/s, median of the runs (n = runs); out of place / in place\n")
    print("| variant | n | " + " | ".join(f"{s >> 20} MiB" for s in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for v in sorted(oop):
        n = max(len(x) for x in oop[v].values())
        cells = [f"{statistics.median(oop[v][s]):.2f} / {statistics.median(inp[v][s]):.2f}" if s in oop[v] else "-" for s in sizes]
        print(f"| {v} | {n} | " + " | ".join(cells) + " |")
    if gloo:
        print("| gloo (CUDA tensors) | 1 | " + " | ".join(f"{gloo.get(s, float('nan')):.2f}" for s in sizes) + " |")
    print("\nratios, out of place (median / median)\n")
    print("| ratio | " + " | ".join(f"{s >> 20} MiB" for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for t in ("tcp", "ucx"):
        p, w = oop.get(f"{t}_pieces"), oop.get(f"{t}_whole")
        if p and w:
            print(f"| {t} pieces / {t} whole | " + " | ".join(
                f"{statistics.median(p[s]) / statistics.median(w[s]):.2f}x" for s in sizes) + " |")
        if p and gloo:
            print(f"| {t} pieces / gloo | " + " | ".join(
                f"{statistics.median(p[s]) / gloo[s]:.2f}x" for s in sizes) + " |")


if __name__ == "__main__":
    main()
