"""bench_mlp's table (run_on_device.sh): the median over rounds of each run's median step time, the DDP
efficiency of hetccl (NCCL's step / hetccl's), hetccl against Gloo, and hetccl over the compute alone.
    python3 summarize_mlp_bench.py RESULTS_DIR   (reads mlp_<mode>_r<k>.json)"""
import glob
import json
import os
import statistics
import sys

NAMES = {"nccl": "NCCL (no hetccl)", "two": "hetccl, two domains (2x1)", "gloo": "Gloo backend",
         "nosync": "compute alone (no_sync, no all-reduce)"}


def main():
    out = sys.argv[1]
    med = {}
    print("| run | median ms/step (median of rounds) | each round's median |\n|---|---|---|")
    for mode, name in NAMES.items():
        runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, f"mlp_{mode}_r*.json")))]
        if runs:
            med[mode] = statistics.median(v["median_ms"] for v in runs)
            each = " ".join(f"{v['median_ms']:.2f}" for v in runs)
            print(f"| {name} | {med[mode]:.2f} | {each} |")
    if "nccl" in med and "two" in med:
        print(f"\nDDP efficiency of hetccl two domains (NCCL's step / hetccl's): {med['nccl'] / med['two']:.2f} (goal >= 0.9)")
    if "gloo" in med and "two" in med:
        print(f"hetccl two domains vs Gloo: {med['gloo'] / med['two']:.2f}x faster")
    for mode in ("two", "nccl"):
        if "nosync" in med and mode in med:
            print(f"{NAMES[mode]} over the compute alone: +{med[mode] - med['nosync']:.2f} ms/step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
