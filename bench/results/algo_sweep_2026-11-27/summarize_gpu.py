import glob, re, statistics, sys, os
raw = sys.argv[1]
def parse_perf(f):
    d = {}
    for line in open(f):
        p = line.split()
        if len(p) >= 13 and p[0].isdigit():
            d[int(p[0])] = float(p[5])  # out-of-place time us
    return d
def parse_torch(f):
    d = {}
    for line in open(f):
        m = re.search(r'all_reduce\s+(\d+) B\s+([\d.]+) us', line)
        if m: d[int(m.group(1))] = float(m.group(2))
    return d
out = []
for layout in ("1p1", "2p2"):
    cols = ["auto", "rd", "ring", "hier", "nccl_host"]
    med = {}
    for c in cols:
        files = sorted(glob.glob(f"{raw}/{layout}_{c}.txt") + glob.glob(f"{raw}/{layout}_{c}.r*.txt"))
        runs = [(parse_torch if c == "nccl_host" else parse_perf)(f) for f in files]
        sizes = sorted(set().union(*[r.keys() for r in runs])) if runs else []
        med[c] = {s: statistics.median([r[s] for r in runs if s in r]) for s in sizes}
    sizes = sorted(med["auto"].keys())
    out.append(f"\n{layout}: all_reduce out-of-place time, us (median of 3 runs of 50 calls); best forced = min(rd, ring, hier)")
    out.append("| bytes | auto | rd | ring | hier | NCCL host path | auto / best forced | best hetccl / NCCL host |")
    out.append("|---|---|---|---|---|---|---|---|")
    for s in sizes:
        vals = {c: med[c].get(s) for c in cols}
        best = min(vals[c] for c in ("rd", "ring", "hier") if vals[c] is not None)
        besth = min(vals[c] for c in ("auto", "rd", "ring", "hier") if vals[c] is not None)
        nh = vals["nccl_host"]
        fmt = lambda v: "-" if v is None else f"{v:.1f}"
        out.append(f"| {s} | " + " | ".join(fmt(vals[c]) for c in cols) + f" | {vals['auto']/best:.2f} | " + (f"{besth/nh:.2f}" if nh else "-") + " |")
print("\n".join(out))
