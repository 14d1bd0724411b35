import glob, statistics, sys
raw=sys.argv[1]
def parse(f):
    d={}
    for line in open(f):
        p=line.split()
        if len(p)>=13 and p[0].isdigit(): d[int(p[0])]=float(p[5])
    return d
for n in ("2","4"):
    med={}
    for a in ("auto","rd","ring","hier"):
        runs=[parse(f) for f in sorted(glob.glob(f"{raw}/{n}r_{a}.r*.txt"))]
        med[a]={s:statistics.median([r[s] for r in runs if s in r]) for s in runs[0]}
    print(f"\n{n} CPU ranks in 2 domains, all_reduce float32 out-of-place us (median of 3 runs of 200 calls)")
    print("| bytes | auto | rd | ring | hier | auto / best forced |")
    print("|---|---|---|---|---|---|")
    for s in sorted(med["auto"]):
        best=min(med[a][s] for a in ("rd","ring","hier"))
        print(f"| {s} | "+" | ".join(f"{med[a][s]:.2f}" for a in ("auto","rd","ring","hier"))+f" | {med['auto'][s]/best:.2f} |")
