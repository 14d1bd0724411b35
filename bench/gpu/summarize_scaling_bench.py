#!/usr/bin/env python3
"""The report of run_scaling_bench.sh: for every GPU count run (4, 8) and collective, hetccl's bus
bandwidth in two domains (each layout) next to NCCL on the same GPUs, NCCL's host path and Gloo; how
busbw scales from 4 to 8 GPUs; the pinned copy ceilings of the same run; and each rank's link rate from
the traffic runs (bytes its device pipeline moved per call / time per call) against those ceilings.

usage: summarize_scaling_bench.py OUT_DIR     (reads OUT_DIR/raw, writes OUT_DIR/scaling_bench.md)
"""
import re
import statistics

from summarize_device_bench import (COLLS, TORCH_LINE, bus_factor, hetccl_series, human, machine_and_commands,
                                    median_rows, num, rep_files, write_report)

BASELINES = [("torch_nccl", "NCCL (one domain)"), ("torch_nccl_host", "NCCL host path"),
             ("torch_gloo", "Gloo (CUDA)")]
TRAFFIC = re.compile(r"rank (\d+): device traffic sent (\d+) received (\d+) bytes in (\d+) groups")


def gpu_counts(raw):
    return sorted({int(m.group(1)) for p in raw.glob("g*_*.txt") if (m := re.match(r"g(\d+)_", p.name))})


def layouts(raw, g):
    """Layout tags ('2p2', '3p1', ...) that have hetccl results for g GPUs, in file order."""
    tags = {m.group(1) for p in raw.glob(f"g{g}_hetccl_*_all_reduce*.txt")
            if (m := re.match(rf"g{g}_hetccl_(\d+p\d+)_all_reduce", p.name))}
    return sorted(tags, key=lambda t: (abs(int(t.split("p")[0]) - int(t.split("p")[1])), t))  # equal first


def torch_series(raw, name, coll, n):
    """{size: busbw} of one collective from torch_colls.py output (several collectives per file)."""
    tables = []
    for path in rep_files(raw, name):
        rows = {}
        for line in path.read_text(errors="replace").splitlines():
            m = TORCH_LINE.match(line)
            if m and m.group(1) == coll:
                rows[int(m.group(2))] = float(m.group(3))
        tables.append(rows)
    return {size: size / (statistics.median(t) * 1e3) * bus_factor(coll, n)
            for size, t in median_rows(tables).items()}


def pinned(raw, g):
    """{'H2D': min over GPUs, 'D2H': ..., 'BIDIR': ..., 'ALL': ...} GB/s for the g-GPU run."""
    vals = {}
    for path in rep_files(raw, f"g{g}_pinned_copy"):
        for m in re.finditer(r"pinned gpu (\S+) (H2D|D2H|BIDIR|ALL) \d+ B median ([\d.]+) GB/s",
                             path.read_text(errors="replace")):
            vals.setdefault(m.group(2), []).append(float(m.group(3)))
    return {k: min(v) for k, v in vals.items()}


def series(raw, g, coll):
    """{column title: {size: busbw}} for g GPUs."""
    cols = {}
    if coll == "all_reduce":
        het, _ = hetccl_series(raw, f"g{g}_hetccl_dom1_all_reduce", coll)
        cols["hetccl one domain"] = {s: v[0] for s, v in het.items()}
    for tag in layouts(raw, g):
        het, _ = hetccl_series(raw, f"g{g}_hetccl_{tag}_{coll}", coll)
        cols[f"hetccl {tag.replace('p', '+')}"] = {s: v[0] for s, v in het.items()}
        wrong = sum(v[2] for v in het.values())
        if wrong:
            cols[f"hetccl {tag.replace('p', '+')}"]["wrong"] = wrong
    for key, label in BASELINES:
        cols[label] = torch_series(raw, f"g{g}_{key}", coll, g)
    return cols


def coll_table(raw, g, coll, ceiling):
    cols = series(raw, g, coll)
    sizes = sorted({s for c in cols.values() for s in c if s != "wrong"})
    if not sizes:
        return ["(no results)", ""]
    hets = [k for k in cols if k.startswith("hetccl ") and "one domain" not in k]
    head = ["size"] + list(cols) + [f"{h} / {b}" for h in hets[:1] for b in ("NCCL host path", "Gloo (CUDA)")]
    if ceiling:
        head += [f"{h} / pinned ALL" for h in hets]
    lines = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
    for s in sizes:
        cells = [human(s)] + [num(c.get(s)) for c in cols.values()]
        for h in hets[:1]:
            for b in ("NCCL host path", "Gloo (CUDA)"):
                a, ref = cols[h].get(s), cols[b].get(s)
                cells.append(f"{a / ref:.2f}" if a and ref else "–")
        if ceiling:
            cells += [f"{cols[h][s] / ceiling:.2f}" if cols[h].get(s) else "–" for h in hets]
        lines.append(f"| {' | '.join(cells)} |")
    wrong = {k: c["wrong"] for k, c in cols.items() if "wrong" in c}
    lines += ["", f"#wrong elements: {wrong or 'none'}", ""]
    return lines


def scaling_lines(raw, counts):
    """busbw at the largest common sizes per configuration, 4 -> 8 GPUs."""
    if len(counts) < 2:
        return ["(one GPU count only)", ""]
    lo, hi = counts[0], counts[-1]
    lines = [f"| collective | size | configuration | {lo} GPUs | {hi} GPUs | ratio |", "|---|---|---|---|---|---|"]
    for coll in COLLS:
        a, b = series(raw, lo, coll), series(raw, hi, coll)
        pairs = [(k, k) for k in a if k in b]
        la, lb = [k for k in a if k.startswith("hetccl ") and "+" in k], [k for k in b if k.startswith("hetccl ") and "+" in k]
        pairs += [(x, y) for x, y in zip(la, lb) if x != y]  # equal with equal, unequal with unequal
        for size in (1 << 20, 64 << 20, 1 << 30):
            for x, y in pairs:
                va, vb = a[x].get(size), b[y].get(size)
                if va is None and vb is None:
                    continue
                name = x if x == y else f"{x} -> {y}"
                r = f"{vb / va:.2f}" if va and vb else "–"
                lines.append(f"| {coll} | {human(size)} | {name} | {num(va)} | {num(vb)} | {r} |")
    lines.append("")
    return lines


def traffic_lines(raw, g, ceiling):
    """Per layout and collective: each rank's sent/received GB/s in the traffic run."""
    lines = []
    for path in sorted(raw.glob(f"g{g}_traffic_*.txt")):
        m = re.match(rf"g{g}_traffic_(\d+p\d+)_(\w+)\.txt", path.name)
        if not m:
            continue
        tag, coll = m.groups()
        het, _ = hetccl_series(raw, path.stem, coll)
        ranks = {int(t.group(1)): (int(t.group(2)), int(t.group(3)), int(t.group(4)))
                 for t in TRAFFIC.finditer(path.read_text(errors="replace"))}
        if not het or not ranks:
            lines.append(f"- {tag.replace('p', '+')} {coll}: no traffic lines or no timing ({path.name})")
            continue
        size, (_, _, _, us) = max(het.items())
        rates = []
        for r in sorted(ranks):
            sent, recv, groups = ranks[r]
            per_call = 1e3 * us * max(groups, 1)
            rates.append(f"{r}: {sent / per_call:.1f}/{recv / per_call:.1f}")
        sends = [ranks[r][0] for r in ranks]
        spread = max(sends) / min(sends) if min(sends) else float("inf")
        note = f"; pinned ALL {ceiling:.1f}" if ceiling else ""
        lines.append(f"- {tag.replace('p', '+')} {coll} {human(size)} ({us:.0f} us per call): rank sent/received "
                     f"GB/s {', '.join(rates)}; busiest/least busy sender {spread:.2f}x{note}")
    return lines + [""] if lines else ["(no traffic runs)", ""]


def report(out_dir):
    raw = out_dir / "raw"
    counts = gpu_counts(raw)
    lines = ["# hetccl scaling on 4 and 8 GPUs (issue 6)", "",
             "busbw in GB/s (nccl-tests factors), median time per size. hetccl: two domains by HETCCL_DOMAIN "
             "(hetccl-run --domains 2 --layout A,B: ranks 0..A-1 in domain 0), one GPU per rank, out of place; "
             "baselines: torch_colls.py (NCCL all_reduce in place, the others out of place). "
             "'pinned ALL': per-direction GB/s per GPU when every GPU copies both ways at once.", ""]
    for g in counts:
        pin = pinned(raw, g)
        ceiling = pin.get("ALL")
        lines += [f"## {g} GPUs", "", "Pinned copies (slowest GPU, GB/s): " +
                  (", ".join(f"{k} {v:.1f}" for k, v in pin.items()) or "none"), ""]
        for coll in COLLS:
            lines += [f"### {coll}, {g} GPUs", ""] + coll_table(raw, g, coll, ceiling)
        lines += [f"### Link rates per rank, {g} GPUs", ""] + traffic_lines(raw, g, ceiling)
    lines += ["## Scaling from 4 to 8 GPUs (busbw)", ""] + scaling_lines(raw, counts)
    lines += machine_and_commands(out_dir)
    return "\n".join(lines)


if __name__ == "__main__":
    write_report(report, "scaling_bench.md", __doc__)
