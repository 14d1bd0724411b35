#!/usr/bin/env python3
"""Markdown table of run_cpu_allreduce.sh's raw outputs: per size and program the median out-of-place time
of the runs, shown as bus bandwidth (GB/s, computed from the time at full precision, 2 ranks: factor 1)
and time (us), and the ratio hetccl / max(MPI, Gloo) of the bus bandwidths.
usage: summarize_allreduce.py RAW_DIR RUNS"""
import statistics
import sys
from pathlib import Path

BUS_FACTOR = 2 * (2 - 1) / 2  # all-reduce, 2 ranks
PROGRAMS = [("hetccl1", "hetccl 1 domain"), ("hetccl2", "hetccl 2 domains"), ("mpi", "MPI"), ("gloo", "Gloo")]


def parse(path):
    """{size: (out-of-place time in us, wrong_total)} from an nccl-tests style table; {} when missing."""
    rows = {}
    if not path.exists():
        return rows
    for line in path.read_text(errors="replace").splitlines():
        f = line.split()
        if len(f) < 13 or line.startswith("#") or not f[0].isdigit():
            continue
        wrong = sum(int(w) for w in (f[8], f[12]) if w.isdigit())
        rows[int(f[0])] = (float(f[5]), wrong)
    return rows


def human(size):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:g} {unit}"
        size /= 1024
    return f"{size:g} TiB"


def main():
    raw, runs = Path(sys.argv[1]), int(sys.argv[2])
    data = {p: [parse(raw / f"{p}_run{r}.txt") for r in range(1, runs + 1)] for p, _ in PROGRAMS}
    sizes = sorted({s for runs_ in data.values() for run in runs_ for s in run})
    head = ["size"] + [label for _, label in PROGRAMS] + ["ratio 1 domain", "ratio 2 domains"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    wrong_total = 0
    for size in sizes:
        bw = {}
        cells = [human(size)]
        for p, _ in PROGRAMS:
            times = [run[size][0] for run in data[p] if size in run]
            wrong_total += sum(run[size][1] for run in data[p] if size in run)
            if not times:
                bw[p] = None
                cells.append("n/a")
                continue
            t = statistics.median(times)
            bw[p] = size / (t * 1e3) * BUS_FACTOR if t > 0 else None
            cells.append(f"{bw[p]:.3g} ({t:.4g} us)" if t < 1000 else f"{bw[p]:.3g} ({t:.0f} us)")
        base = max((v for v in (bw["mpi"], bw["gloo"]) if v), default=None)
        for p in ("hetccl1", "hetccl2"):
            cells.append(f"{bw[p] / base:.2f}" if bw[p] and base else "n/a")
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"Wrong elements over all runs and sizes: {wrong_total}.")


if __name__ == "__main__":
    main()
