"""Medians over rounds of one_domain_rounds.txt (hetccl-perf, call_cost_probe, nccl_allreduce_time) and of
fake_nccl_rounds_h200.txt (call_cost_probe over a fake NCCL: hetccl's own host cost). Usage: python3 summarize.py"""
import collections, re, statistics

perf = collections.defaultdict(list)   # (variant, bytes, place) -> us
probe = collections.defaultdict(list)  # (variant, mode, what) -> us
nccl = collections.defaultdict(list)   # bytes -> us (rank 0)
for line in open("one_domain_rounds.txt"):
    m = re.match(r"(before|after) r\d perf \|\s+(\d+)\s+\d+\s+float\s+sum\s+-1\s+([\d.]+)\s+\S+\s+\S+\s+0\s+([\d.]+)", line)
    if m:
        perf[(m[1], int(m[2]), "out")].append(float(m[3]))
        perf[(m[1], int(m[2]), "in")].append(float(m[4]))
    m = re.match(r"(before|after) r\d probe (\w+) \|\s+hetcclAllReduce, (host only|with device)\s+([\d.]+)", line)
    if m:
        probe[(m[1], m[2], m[3])].append(float(m[4]))
    m = re.match(r"nccl r\d \| rank 0 bytes (\d+) time_us ([\d.]+)", line)
    if m:
        nccl[int(m[1])].append(float(m[2]))
med = statistics.median
print("| bytes | NCCL alone | hetccl before (out / in place) | hetccl after (out / in place) | before - NCCL | after - NCCL | before / after |")
print("|---|---|---|---|---|---|---|")
for b in sorted(nccl):
    n = med(nccl[b])
    bo, bi, ao, ai = (med(perf[(v, b, p)]) for v in ("before", "after") for p in ("out", "in"))
    print(f"| {b} | {n:.2f} | {bo:.2f} / {bi:.2f} | {ao:.2f} / {ai:.2f} | {bo - n:+.2f} | {ao - n:+.2f} | {bo / ao:.2f} |")
print()
print("call_cost_probe, 8 B, real NCCL (us per call, median):")
for mode in ("outofplace", "inplace"):
    for what in ("host only", "with device"):
        b, a = med(probe[("before", mode, what)]), med(probe[("after", mode, what)])
        print(f"  {mode:10s} {what:11s} before {b:6.2f}  after {a:6.2f}  ratio {b / a:.2f}  (n={len(probe[('before', mode, what)])})")
fake = collections.defaultdict(list)
for line in open("fake_nccl_rounds_h200.txt"):
    m = re.match(r"(before|after) run\d (\w+) (\d+) B \|.*host only\s+([\d.]+)", line)
    if m:
        fake[(m[1], m[2], int(m[3]))].append(float(m[4]))
print()
print("call_cost_probe over a fake NCCL (hetccl's own host cost, us per call, median of 5):")
for mode in ("outofplace", "inplace"):
    for b in (8, 4096):
        bf, af = med(fake[("before", mode, b)]), med(fake[("after", mode, b)])
        print(f"  {mode:10s} {b:5d} B  before {bf:.2f}  after {af:.2f}  ratio {bf / af:.2f}")
