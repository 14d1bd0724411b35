#!/usr/bin/env python3
"""Auto against every forced algorithm: does HETCCL_ALGO=auto lose anywhere? (issue 26, "auto never loses")

Runs `hetccl-perf COLL` under hetccl-run once per variant and repetition, interleaved (variant order rotates
each repetition, so drift hits every variant alike): `auto` and each forced HETCCL_ALGO (ring, tree, rd,
hier), plus any `--variant NAME:VAR=VALUE,...` (auto with those variables set, e.g. `small1k:HETCCL_SMALL_BYTES=1K`)
and `--before-build DIR` (auto with another build's hetccl-run, hetccl-perf and libhetccl.so, e.g. the commit
before a change: variant `before`), all in the same run. `--compete NAME:VAR=VALUE,...` adds a variant that
auto must also keep up with (a forced path or chunk size on device buffers, e.g.
`pipeline:HETCCL_GPU_EXEC=pipeline`, `noll:HETCCL_GPU_LL_BYTES=0`, `chunk256k:HETCCL_GPU_MIN_CHUNK_BYTES=256K`);
`--device cuda|hip|gpu` puts the buffers on each rank's GPU (hetccl-perf --device; export HETCCL_CUDA_PLUGIN
where the plugin is not beside libhetccl.so). Takes the median time per size of each variant (out of place), and
prints a markdown table with auto / best forced. Exit status 1 when auto is slower than `--floor` (0.95) x
the best forced (or --compete) variant at some size, i.e. auto time > best time / floor; 0 otherwise. Every hetccl-perf run
checks its results (a wrong element fails the run, and this script).

`--write-tuning FILE` (all_reduce only) writes what was measured as rows of a tuning table (HETCCL_TUNING_FILE,
src/algo/tuning_table.hpp) for this layout (ranks, domains, one host, the transport): per measured size the
fastest forced algorithm (the previous size's one where that is within --floor of the fastest, so noise does
not split bands), consecutive sizes with one algorithm merged into a band up to the largest of them. Rows of
the same layout already in FILE are replaced, others kept. Sizes above the largest measured keep the
library's built-in rules. Check a table with `--variant table:HETCCL_TUNING_FILE=FILE` in a second run.

This is a benchmark, not a test: on a loaded or small machine the verdict is noise (ranks that outnumber
cores time-slice). Record results with the machine under bench/results/.

Usage: bench/run_algo_sweep.py --build build [--coll all_reduce] [-n 2] [--domains 2] [--layout blocks]
         [--transport shm] [--reps 3] [-b 8] [-e 1M] [-f 4] [--iters 200] [--warmup 20] [--out DIR]
         [--algos auto,ring,tree,rd,hier] [--variant NAME:VAR=VALUE,...]... [--compete NAME:VAR=VALUE,...]...
         [--before-build DIR] [--floor 0.95] [--device host|cuda|hip|gpu] [--write-tuning FILE]
"""
import argparse
import os
import statistics
import subprocess
import sys

FORCED = ("ring", "tree", "rd", "hier")


def parse_times(text):
    """{bytes: out-of-place time in us} from hetccl-perf's table (nccl-tests columns)."""
    times = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) >= 13 and p[0].isdigit():
            times[int(p[0])] = float(p[5])
    return times


def variants_of(opts):
    """[(name, {VAR: value}, build dir)]: auto, the forced algorithms asked for, then --variant ones and
    --before-build's."""
    out = []
    for a in opts.algos.split(","):
        if a != "auto" and a not in FORCED:
            sys.exit(f"run_algo_sweep: unknown algorithm '{a}' (auto, {', '.join(FORCED)})")
        out.append((a, {"HETCCL_ALGO": a}, opts.build))
    for v in opts.variant + opts.compete:
        name, _, assigns = v.partition(":")
        env = {"HETCCL_ALGO": "auto"}
        for kv in filter(None, assigns.split(",")):
            k, sep, val = kv.partition("=")
            if not sep:
                sys.exit(f"run_algo_sweep: --variant {v}: '{kv}' is not VAR=VALUE")
            env[k] = val
        out.append((name, env, opts.build))
    if opts.before_build:
        out.append(("before", {"HETCCL_ALGO": "auto"}, opts.before_build))
    return out


def run_once(opts, env_extra, build):
    tools = os.path.join(build, "tools")
    cmd = [os.path.join(tools, "hetccl-run"), "-n", str(opts.n), "--domains", str(opts.domains)]
    if opts.layout:
        cmd += ["--layout", opts.layout]
    cmd += ["--", os.path.join(tools, "hetccl-perf"), opts.coll, "-b", opts.b, "-e", opts.e, "-f", str(opts.f),
            "-n", str(opts.iters), "-w", str(opts.warmup)]
    if opts.device != "host":
        cmd += ["--device", opts.device]
    lib_path = os.path.abspath(build) + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    env = dict(os.environ, HETCCL_TRANSPORT=opts.transport, LD_LIBRARY_PATH=lib_path, **env_extra)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=opts.timeout)
    if r.returncode != 0 or "Out of bounds values : 0 OK" not in r.stdout:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
        sys.exit(f"run_algo_sweep: {' '.join(f'{k}={v}' for k, v in env_extra.items())} {' '.join(cmd)} failed "
                 f"(exit {r.returncode})")
    return r.stdout


def tuning_bands(med, forced, floor):
    """[(up_to_bytes, algorithm)] from the medians: the fastest forced algorithm per size, the previous size's
    where it is within `floor` of the fastest; runs of one algorithm merged."""
    bands = []
    for s in sorted(med[forced[0]]):
        best = min(forced, key=lambda n: med[n][s])
        if bands and med[bands[-1][1]][s] * floor <= med[best][s]:
            best = bands[-1][1]
        if bands and bands[-1][1] == best:
            bands[-1] = (s, best)
        else:
            bands.append((s, best))
    return bands


def write_tuning(path, opts, bands):
    """Replaces this layout's rows of the tuning table at `path` (created if missing) by `bands`."""
    key = ["all_reduce", str(opts.n), str(opts.domains), "1", opts.transport]
    header = f"# {opts.n} ranks in {opts.domains} domain(s) over {opts.transport}: "
    kept = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.split("#")[0].split()[:5] != key and not line.startswith(header):
                    kept.append(line.rstrip("\n"))
    while kept and not kept[-1].strip():
        kept.pop()
    if not kept:
        kept = ["# hetccl tuning table (HETCCL_TUNING_FILE): all_reduce RANKS DOMAINS HOSTS TRANSPORT UP_TO_BYTES ALGORITHM"]
    kept.append(f"{header}bench/run_algo_sweep.py, median of {opts.reps} runs of {opts.iters} calls, {opts.b}-{opts.e}")
    kept += [" ".join(key + [str(up_to), algo]) for up_to, algo in bands]
    with open(path, "w") as f:
        f.write("\n".join(kept) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--coll", default="all_reduce")
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--domains", type=int, default=2)
    ap.add_argument("--layout", default="")
    ap.add_argument("--transport", default="shm")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="1M")
    ap.add_argument("-f", type=int, default=4)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--algos", default="auto," + ",".join(FORCED))
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--compete", action="append", default=[])
    ap.add_argument("--device", default="host", choices=["host", "cuda", "hip", "gpu"])
    ap.add_argument("--before-build", default="")
    ap.add_argument("--floor", type=float, default=0.95)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", default="")
    ap.add_argument("--write-tuning", default="")
    opts = ap.parse_args()
    if opts.write_tuning and opts.coll != "all_reduce":
        sys.exit("run_algo_sweep: --write-tuning: only all_reduce can be tuned")

    variants = variants_of(opts)
    if opts.out:
        os.makedirs(opts.out, exist_ok=True)
    runs = {name: [] for name, _, _ in variants}
    for rep in range(opts.reps):
        k = rep % len(variants)
        for name, env, build in variants[k:] + variants[:k]:
            text = run_once(opts, env, build)
            runs[name].append(parse_times(text))
            if opts.out:
                with open(os.path.join(opts.out, f"{name}.r{rep + 1}.txt"), "w") as f:
                    f.write(text)
    med = {name: {s: statistics.median(r[s] for r in rs) for s in rs[0]} for name, rs in runs.items()}

    competing = {v.partition(":")[0] for v in opts.compete}
    forced = [name for name, _, _ in variants if name in FORCED or name in competing]
    others = [name for name, _, _ in variants if name not in forced and name != "auto"]
    names = [n for n, _, _ in variants]
    print(f"\n{opts.coll}, {opts.n} ranks in {opts.domains} domain(s){' (' + opts.layout + ')' if opts.layout else ''}, "
          f"{opts.device} buffers, transport {opts.transport}: out-of-place time, us (median of {opts.reps} runs of {opts.iters} calls)")
    cols = names + (["auto / best forced"] if "auto" in med and forced else [])
    cols += [f"{o} / auto" for o in others if "auto" in med]
    print("| bytes | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    losses = []
    for s in sorted(med[names[0]]):
        row = [f"{med[n][s]:.2f}" for n in names]
        if "auto" in med and forced:
            best = min(forced, key=lambda n: med[n][s])
            ratio = med["auto"][s] / med[best][s]
            row.append(f"{ratio:.2f} ({best})")
            if med["auto"][s] > med[best][s] / opts.floor:
                losses.append(f"{s} B: auto {med['auto'][s]:.2f} us, {best} {med[best][s]:.2f} us ({ratio:.2f}x)")
        row += [f"{med[o][s] / med['auto'][s]:.2f}" for o in others if "auto" in med]
        print(f"| {s} | " + " | ".join(row) + " |")
    if opts.write_tuning:
        candidates = [n for n in forced if n in FORCED and not (n == "hier" and opts.domains == 1)]
        if not candidates:
            sys.exit("run_algo_sweep: --write-tuning needs forced algorithms (--algos)")
        bands = tuning_bands(med, candidates, opts.floor)
        write_tuning(opts.write_tuning, opts, bands)
        print(f"\n{opts.write_tuning}: " + ", ".join(f"{a} up to {b} B" for b, a in bands))
    if losses:
        print(f"\nauto loses (slower than {opts.floor} x the best forced algorithm) at: " + "; ".join(losses))
        return 1
    if "auto" in med and forced:
        print(f"\nauto is within {opts.floor} x the best forced algorithm at every size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
