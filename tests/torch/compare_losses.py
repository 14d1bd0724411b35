"""compare_losses.py REFERENCE CANDIDATE [--rtol 1e-3] [--min-steps N]: per-step losses ("step loss" lines,
as ddp_train.py / fsdp_train.py write them) agree step by step within a relative error. Exit 0 when every
step matches, 1 otherwise (missing steps, NaN, or a step off by more than rtol)."""
import argparse
import math
import sys


def read(path):
    losses = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"{path}:{n}: expected 'step loss', got {line!r}")
            losses[int(parts[0])] = float(parts[1])
    return losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("reference")
    p.add_argument("candidate")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--min-steps", type=int, default=1)
    a = p.parse_args()
    ref, got = read(a.reference), read(a.candidate)
    problems = []
    if sorted(ref) != sorted(got):
        problems.append(f"steps differ: reference has {len(ref)}, candidate {len(got)}")
    if len(ref) < a.min_steps:
        problems.append(f"only {len(ref)} steps, expected at least {a.min_steps}")
    common = sorted(set(ref) & set(got))
    worst, worst_step = 0.0, common[0] if common else None
    for step in common:
        r, c = ref[step], got[step]
        if not (math.isfinite(r) and math.isfinite(c)):
            problems.append(f"step {step}: non-finite loss (reference {r}, candidate {c})")
            continue
        rel = abs(c - r) / max(abs(r), 1e-12)
        if rel > worst:
            worst, worst_step = rel, step
    if worst > a.rtol:
        problems.append(f"step {worst_step}: relative error {worst:.3g} > {a.rtol:g} "
                        f"(reference {ref[worst_step]:.9g}, candidate {got[worst_step]:.9g})")
    verdict = "FAIL" if problems else "OK"
    print(f"{verdict}: {a.candidate} vs {a.reference}: {len(ref)} steps, max relative error {worst:.3g}"
          f" (step {worst_step}), tolerance {a.rtol:g}")
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
