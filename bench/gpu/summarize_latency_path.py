#!/usr/bin/env python3
"""The report of run_latency_path_bench.sh: per layout, all-reduce time per call (median over rounds) of
hetccl without the latency path (the stream pipeline alone), with it, NCCL's host path and NCCL's default,
with the ratios; then the correctness checks' verdicts.

usage: summarize_latency_path.py OUT_DIR     (reads OUT_DIR/raw and OUT_DIR/steps.tsv, prints markdown)
"""
import re
import statistics
import sys
from pathlib import Path


def hetccl_times(path):
    """{bytes: (out-of-place time us, wrong)} of a hetccl-perf table."""
    rows = {}
    for line in path.read_text(errors="replace").splitlines():
        f = line.split()
        if len(f) < 13 or line.lstrip().startswith("#") or not f[0].isdigit():
            continue
        wrong = sum(int(w) for w in (f[8], f[12]) if w.isdigit())
        rows[int(f[0])] = (float(f[5]), wrong)
    return rows


NCCL_LINE = re.compile(r"^rank (\d+) bytes (\d+) time_us ([\d.]+)")


def nccl_times(path):
    """{bytes: time us, the slowest rank's} of nccl_allreduce_time's lines."""
    rows = {}
    for line in path.read_text(errors="replace").splitlines():
        m = NCCL_LINE.match(line)
        if m:
            b, t = int(m.group(2)), float(m.group(3))
            rows[b] = max(rows.get(b, 0.0), t)
    return rows


def medians(raw, prefix, parse):
    """{bytes: median time} over prefix.r1.txt, prefix.r2.txt, ...; and the total of wrong results."""
    per_size, wrong = {}, 0
    for p in sorted(raw.glob(f"{prefix}.r*.txt")):
        for b, v in parse(p).items():
            t, w = v if isinstance(v, tuple) else (v, 0)
            per_size.setdefault(b, []).append(t)
            wrong += w
    return {b: statistics.median(ts) for b, ts in per_size.items()}, wrong


def size_name(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 and b % (1 << 20) == 0 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"


def main(out):
    raw = Path(out) / "raw"
    for layout, title in (("1p1", "1+1 (2 GPUs, two domains)"), ("2p2", "2+2 (4 GPUs, two domains of two)"),
                          ("1dom", "one domain, 2 GPUs (hetccl delegates to NCCL: no latency path)")):
        off, wrong_off = medians(raw, f"{layout}_off", hetccl_times)
        ll, wrong_ll = medians(raw, f"{layout}_ll", hetccl_times)
        if not off and not ll:
            continue
        host, _ = medians(raw, f"{layout}_nccl_host", nccl_times)
        nccl, _ = medians(raw, f"{layout}_nccl", nccl_times)
        rounds = len(list(raw.glob(f"{layout}_ll.r*.txt")))
        print(f"\n### {title}: all-reduce float32 sum, time per call in us (median of {rounds} rounds)\n")
        variants = sorted({p.name.split(".r")[0][len(f"{layout}_v_"):] for p in raw.glob(f"{layout}_v_*.r*.txt")})
        extra = {}
        for v in variants:
            extra[v], w = medians(raw, f"{layout}_v_{v}", hetccl_times)
            wrong_ll += w
        print(f"hetccl-perf wrong results: {wrong_off} without the path, {wrong_ll} with it (variants included)\n")
        head = "".join(f" {v} | {v} / NCCL host |" for v in variants)
        print(f"| bytes | pipeline alone | latency path | speed-up | NCCL host path | path / NCCL host | NCCL | path / NCCL |{head}")
        print("|---|---|---|---|---|---|---|---|" + "---|---|" * len(variants))
        cell = lambda v: f"{v:.1f}" if v else "-"
        ratio = lambda a, c: f"{a / c:.2f}" if a and c else "-"
        for b in sorted(set(off) | set(ll)):
            o, l, h, n = off.get(b), ll.get(b), host.get(b), nccl.get(b)
            more = "".join(f" {cell(extra[v].get(b))} | {ratio(extra[v].get(b), h)} |" for v in variants)
            print(f"| {size_name(b)} | {cell(o)} | {cell(l)} | {ratio(o, l)}x | {cell(h)} | {ratio(l, h)} | {cell(n)} | {ratio(l, n)} |{more}")
    steps = Path(out) / "steps.tsv"
    if steps.exists():
        print("\n### Checks\n")
        for line in steps.read_text().splitlines()[1:]:
            name, rc, secs = line.split("\t")
            if name.startswith(("check_", "perf_shared")):
                verdict = "PASS" if rc == "0" else f"FAIL (exit {rc})"
                print(f"- {name}: {verdict}, {secs} s")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
