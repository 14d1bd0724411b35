#!/usr/bin/env python3
"""The report of run_device_bench.sh: one markdown table per collective and layout, with hetccl's bus
bandwidth next to NCCL (NVLink default, host path, socket), Gloo on CUDA tensors and the pinned copy
bandwidth measured in the same run, and the ratios against the goals of issue 3. Machine info, exact
commands and per-command exit status and duration follow.

usage: summarize_device_bench.py OUT_DIR      (reads OUT_DIR/raw, writes OUT_DIR/device_bench.md)

Raw files (NAME.txt, and NAME.rK.txt for repetitions K >= 2; the median time over repetitions is used):
  hetccl{1,2x1,2x2,tcp}_COLL   hetccl-perf tables (COLL: all_reduce all_gather reduce_scatter alltoall)
  hetccl1_all_reduce_8B        hetccl-perf at 8 bytes
  nccl_{default,host}_COLL, nccl_socket_all_reduce, gloo_COLL, nccl_default_all_reduce_8B
                               torch_baseline.py lines
  pinned_copy                  pinned_copy_bw.py lines
"""
import re
import statistics
import sys
from pathlib import Path

COLLS = ["all_reduce", "all_gather", "reduce_scatter", "alltoall"]
LAYOUTS = [  # (file prefix, title, collectives)
    ("hetccl1", "one domain, 2 ranks (2 GPUs)", ["all_reduce"]),
    ("hetccl2x1", "two domains 2x1 (one GPU each)", COLLS),
    ("hetccl2x2", "two domains 2x2 (4 ranks on 2 GPUs, each domain has both GPUs)", COLLS),
    ("hetccltcp", 'two domains on "different hosts" over tcp (HETCCL_HOST_ID)', ["all_reduce"]),
]
BASELINES = [("nccl_default", "NCCL"), ("nccl_host", "NCCL host path"), ("nccl_socket", "NCCL socket"),
             ("gloo", "Gloo (CUDA)")]
MB = 1 << 20


def bus_factor(coll, n):
    return 2 * (n - 1) / n if coll == "all_reduce" else (n - 1) / n


def rep_files(raw, name):
    """NAME.txt and its repetitions NAME.rK.txt that exist."""
    return [p for p in [raw / f"{name}.txt"] + sorted(raw.glob(f"{name}.r*.txt")) if p.exists()]


def parse_hetccl(path):
    """(nranks, {size: (oop time us, in-place time us or None, wrong)}) from a hetccl-perf table."""
    text = path.read_text(errors="replace")
    m = re.search(r"# nRanks (\d+)", text)
    n = int(m.group(1)) if m else 2
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 13 or line.lstrip().startswith("#") or not f[0].isdigit():
            continue
        ip = float(f[9]) if f[9] != "N/A" else None
        wrong = sum(int(w) for w in (f[8], f[12]) if w.isdigit())
        rows[int(f[0])] = (float(f[5]), ip, wrong)
    return n, rows


TORCH_LINE = re.compile(r"^\S+\s+\S+\s+(\S+)\s+(\d+) B\s+([\d.]+) us")


def parse_torch(path):
    """{size: time us} from torch_baseline.py output (2 ranks)."""
    rows = {}
    for line in path.read_text(errors="replace").splitlines():
        m = TORCH_LINE.match(line)
        if m:
            rows[int(m.group(2))] = float(m.group(3))
    return rows


def parse_pinned(raw):
    """{(gpu, 'H2D'|'D2H'): GB/s} from pinned_copy_bw.py output."""
    out = {}
    for path in rep_files(raw, "pinned_copy"):
        for m in re.finditer(r"pinned gpu (\d+) (H2D|D2H) \d+ B median ([\d.]+) GB/s", path.read_text(errors="replace")):
            out[(int(m.group(1)), m.group(2))] = float(m.group(3))
    return out


def median_rows(tables):
    """Per size, the median of each column over repetitions (None where absent)."""
    merged = {}
    for t in tables:
        for size, v in t.items():
            merged.setdefault(size, []).append(v)
    return merged


def hetccl_series(raw, name, coll):
    """({size: (oop busbw, ip busbw or None, wrong total, oop time us)}, nranks) or ({}, 2)."""
    parsed = [parse_hetccl(p) for p in rep_files(raw, name)]
    if not parsed:
        return {}, 2
    n = parsed[0][0]
    out = {}
    for size, vals in median_rows([rows for _, rows in parsed]).items():
        t = statistics.median(v[0] for v in vals)
        ips = [v[1] for v in vals if v[1] is not None]
        ip = statistics.median(ips) if ips else None
        bw = lambda us: size / (us * 1e3) * bus_factor(coll, n) if us else None
        out[size] = (bw(t), bw(ip), sum(v[2] for v in vals), t)
    return out, n


def torch_series(raw, name, coll):
    """{size: (busbw, time us)} (2 ranks) or {}."""
    out = {}
    for size, times in median_rows([parse_torch(p) for p in rep_files(raw, name)]).items():
        t = statistics.median(times)
        out[size] = (size / (t * 1e3) * bus_factor(coll, 2) if t else None, t)
    return out


def human(size):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:g} {unit}"
        size /= 1024
    return f"{size:g} TiB"


def num(v):
    return "–" if v is None else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def ratio(a, b, goal=None, applies=True):
    """'0.93 ✗' style: a/b, marked against the goal where it applies."""
    if a is None or not b:
        return "–"
    r = a / b
    mark = "" if goal is None or not applies else (" ✓" if r >= goal else " ✗")
    return f"{r:.2f}{mark}"


def layout_table(raw, prefix, coll, pinned_bw, misses):
    """Markdown lines of one table; adds goal misses to `misses` ({goal: ["size ratio", ...]})."""
    het, n = hetccl_series(raw, f"{prefix}_{coll}", coll)
    tcoll = "all_to_all" if coll == "alltoall" else coll
    base = {key: torch_series(raw, f"{key}_{coll}", tcoll) for key, _ in BASELINES}
    sizes = sorted(set(het) | {s for b in base.values() for s in b})
    if not sizes:
        return [f"(no results: raw/{prefix}_{coll}.txt missing or empty)", ""]
    cross = prefix in ("hetccl2x1", "hetccl2x2")
    head = ["size", "hetccl busbw", "in-place", "#wrong"] + [label for _, label in BASELINES]
    if prefix == "hetccl1":
        head += ["hetccl/NCCL (goal ≥0.99 at ≥1 MiB)"]
    elif cross:
        head += ["hetccl/pinned copy (goal ≥0.8 at ≥64 MiB)", "hetccl/NCCL host (goal ≥1 at ≥1 MiB)",
                 "hetccl/Gloo (goal ≥20)"]
    else:
        head += ["hetccl/NCCL socket (goal ≥2)"]
    lines = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
    for size in sizes:
        h = het.get(size)
        hb = h[0] if h else None
        b = {key: (base[key].get(size) or (None,))[0] for key, _ in BASELINES}
        cells = [human(size), num(hb), num(h[1]) if h else "–", str(h[2]) if h else "–"]
        cells += [num(b[key]) for key, _ in BASELINES]
        checks = []
        if prefix == "hetccl1":
            checks = [(hb, b["nccl_default"], 0.99, size >= MB, "vs NCCL")]
        elif cross:
            checks = [(hb, pinned_bw, 0.8, size >= 64 * MB, "vs pinned copy"),
                      (hb, b["nccl_host"], 1.0, size >= MB, "vs NCCL host path"),
                      (hb, b["gloo"], 20.0, True, "vs Gloo")]
        else:
            checks = [(hb, b["nccl_socket"], 2.0, True, "vs NCCL socket")]
        for a, ref, goal, applies, what in checks:
            cells.append(ratio(a, ref, goal, applies))
            if a is not None and ref and applies and a / ref < goal:
                misses.setdefault(f"{prefix} {coll} {what} (goal {goal:g}x)", []).append(
                    f"{human(size)} {a / ref:.2f}x")
        lines.append(f"| {' | '.join(cells)} |")
    lines.append("")
    return lines


def small_message_lines(raw):
    """The 8-byte all-reduce latency of hetccl (one domain) against NCCL."""
    het, _ = hetccl_series(raw, "hetccl1_all_reduce_8B", "all_reduce")
    nccl = torch_series(raw, "nccl_default_all_reduce_8B", "all_reduce")
    h, c = het.get(8), nccl.get(8)
    if not h and not c:
        return ["8-byte all_reduce: no results", ""]
    ht, ct = (h[3] if h else None), (c[1] if c else None)
    line = f"8-byte all_reduce, one domain: hetccl {num(ht)} us, NCCL {num(ct)} us"
    if ht is not None and ct is not None:
        d = ht - ct
        line += f", difference {d:+.1f} us (goal ≤ +2 us: {'✓' if d <= 2 else '✗'})"
    return [line, ""]


def read(path):
    return path.read_text(errors="replace").rstrip() if path.exists() else "(missing)"


def machine_and_commands(out_dir):
    """Markdown lines: machine.txt, then every command with its exit status and seconds."""
    lines = ["## Machine", "", "```", read(out_dir / "machine.txt"), "```", "",
              "## Commands (exit status, seconds)", ""]
    steps = {}
    if (out_dir / "steps.tsv").exists():
        for row in (out_dir / "steps.tsv").read_text().splitlines():
            f = row.split("\t")
            if len(f) == 3 and f[0] != "name":
                steps[f[0]] = (f[1], f[2])
    lines += ["| name | rc | s | command |", "|---|---|---|---|"]
    if (out_dir / "commands.tsv").exists():
        for row in (out_dir / "commands.tsv").read_text().splitlines():
            name, _, cmd = row.partition("\t")
            if name == "name":  # a header (two runs' files may be concatenated)
                continue
            rc, secs = steps.get(name, ("?", "?"))
            lines.append(f"| {name} | {rc} | {secs} | `{cmd.replace('|', '&#124;')}` |")
    lines.append("")
    return lines


def report(out_dir):
    raw = out_dir / "raw"
    pinned = parse_pinned(raw)
    pinned_bw = min(pinned.values()) if pinned else None
    misses = {}
    lines = ["# hetccl on GPU buffers: device benchmark (issue 3)", "",
             "busbw in GB/s (nccl-tests factors; 2 ranks except 2x2: 4), from the median time per size; "
             "hetccl: out-of-place unless marked; baselines through torch_baseline.py (NCCL all_reduce in place, "
             "the others out of place). Ratios: ✓/✗ where the goal applies.", "",
             "## Pinned copy bandwidth (GB/s, 256 MiB, median of 5)", ""]
    if pinned:
        lines += ["| GPU | H2D | D2H |", "|---|---|---|"]
        for g in sorted({g for g, _ in pinned}):
            lines.append(f"| {g} | {num(pinned.get((g, 'H2D')))} | {num(pinned.get((g, 'D2H')))} |")
        lines += ["", f"Reference for the two-domain goal: the slowest of these, {pinned_bw:.1f} GB/s "
                  f"(0.8x = {0.8 * pinned_bw:.1f} GB/s).", ""]
    else:
        lines += ["(no pinned copy results)", ""]
    for prefix, title, colls in LAYOUTS:
        for coll in colls:
            lines += [f"## {coll}: {title}", ""]
            lines += layout_table(raw, prefix, coll, pinned_bw, misses)
        if prefix == "hetccl1":
            lines += small_message_lines(raw)
    lines += ["## Goals missed", ""]
    lines += [f"- {goal}: {', '.join(at)}" for goal, at in misses.items()] or ["(none)"]
    lines.append("")
    lines += machine_and_commands(out_dir)
    lines.append("")
    return "\n".join(lines)


def write_report(make_report, file_name, usage):
    """The command line of a summarizer: OUT_DIR -> OUT_DIR/file_name (and stdout)."""
    if len(sys.argv) != 2:
        sys.exit(usage)
    out_dir = Path(sys.argv[1])
    text = make_report(out_dir)
    (out_dir / file_name).write_text(text)
    print(text)


if __name__ == "__main__":
    write_report(report, "device_bench.md", __doc__)
