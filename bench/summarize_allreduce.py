#!/usr/bin/env python3
"""Markdown table of run_cpu_allreduce.sh's raw outputs: per size and program the median out-of-place time
of the runs, shown as bus bandwidth (GB/s, computed from the time at full precision; all-reduce factor
2(n-1)/n, 1 at 2 ranks) and time (us), and the ratio hetccl / max(MPI, Gloo) of the bus bandwidths.
usage: summarize_allreduce.py RAW_DIR RUNS [--nranks N] [--programs key=label,...] [--ratios key=label,...]
Raw files are RAW_DIR/<key>_run<r>.txt. The defaults are run_cpu_allreduce.sh's (2 ranks; hetccl1, hetccl2,
mpi, gloo); run_netns_allreduce.py passes its own keys. The baselines are always the keys mpi, mpi_ucx and gloo."""
import argparse
import statistics
from pathlib import Path

PROGRAMS = [("hetccl1", "hetccl 1 domain"), ("hetccl2", "hetccl 2 domains"), ("mpi", "MPI"), ("gloo", "Gloo")]
RATIOS = [("hetccl1", "ratio 1 domain"), ("hetccl2", "ratio 2 domains")]
BASELINES = ("mpi", "mpi_ucx", "gloo")


def pairs(text):
    """"a=A,b=B" -> [("a", "A"), ("b", "B")]."""
    return [tuple(item.split("=", 1)) for item in text.split(",") if item]


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
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("runs", type=int)
    ap.add_argument("--nranks", type=int, default=2)
    ap.add_argument("--programs", type=pairs, default=PROGRAMS)
    ap.add_argument("--ratios", type=pairs, default=RATIOS)
    args = ap.parse_args()
    raw, runs, programs = Path(args.raw), args.runs, args.programs
    bus_factor = 2 * (args.nranks - 1) / args.nranks  # all-reduce
    data = {p: [parse(raw / f"{p}_run{r}.txt") for r in range(1, runs + 1)] for p, _ in programs}
    sizes = sorted({s for runs_ in data.values() for run in runs_ for s in run})
    head = ["size"] + [label for _, label in programs] + [label for _, label in args.ratios]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    wrong_total = 0
    for size in sizes:
        bw = {}
        cells = [human(size)]
        for p, _ in programs:
            times = [run[size][0] for run in data[p] if size in run]
            wrong_total += sum(run[size][1] for run in data[p] if size in run)
            if not times:
                bw[p] = None
                cells.append("n/a")
                continue
            t = statistics.median(times)
            bw[p] = size / (t * 1e3) * bus_factor if t > 0 else None
            cells.append(f"{bw[p]:.3g} ({t:.4g} us)" if t < 1000 else f"{bw[p]:.3g} ({t:.0f} us)")
        base = max((bw[b] for b in BASELINES if bw.get(b)), default=None)
        for p, _ in args.ratios:
            cells.append(f"{bw[p] / base:.2f}" if bw.get(p) and base else "n/a")
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"Wrong elements over all runs and sizes: {wrong_total}.")


if __name__ == "__main__":
    main()
