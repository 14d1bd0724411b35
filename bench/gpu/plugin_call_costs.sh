#!/usr/bin/env bash
# plugin_call_costs.sh DIR... : where the host's time of a 1+1 all-reduce goes, per GPU runtime call (issue 26).
# Each DIR holds a hetccl build (dropin/libnccl.so.2, libhetccl-cuda.so) as allreduce_variants.sh takes it; this
# script puts bench/gpu/plugin_call_timer.cc (built here with g++) in front of the build's plugin and runs one
# all-reduce size per process, so that each size's counts are its own. Prints, per build and size, each plugin
# entry point's calls and host microseconds per all-reduce (rank 0), and the call's time and host time.
# Environment: NCCL_TIME (required), SIZES_LIST ("128K 1M 4M"), ITERS (100), WARMUP (10), ENVS (extra
# VAR=VALUE,... for every run), OUT (./plugin-call-costs), TIMER_SO (the timer, built elsewhere).
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: NCCL_TIME=... $0 DIR..." >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/plugin-call-costs}
mkdir -p "$out" && out=$(cd "$out" && pwd)
iters=${ITERS:-100} warmup=${WARMUP:-10}
for dir in "$@"; do
  d=$(cd "$dir" && pwd) || exit 2
  label=$(basename "$d")
  t=$out/timed-$label
  mkdir -p "$t/dropin"
  cp "$d/dropin/libnccl.so.2" "$t/dropin/" && cp "$d/libhetccl-cuda.so" "$t/libhetccl-cuda-real.so" || exit 2
  if [[ -n ${TIMER_SO:-} ]]; then cp "$TIMER_SO" "$t/libhetccl-cuda.so" || exit 2
  else g++ -std=c++17 -O2 -shared -fPIC -I"$repo/src" -o "$t/libhetccl-cuda.so" "$repo/bench/gpu/plugin_call_timer.cc" -ldl || exit 2; fi
  for s in ${SIZES_LIST:-128K 1M 4M}; do
    OUT=$out/$label-$s SIZES="-b $s -e $s" ITERS=$iters WARMUP=$warmup \
      bash "$repo/bench/gpu/allreduce_variants.sh" 1 "$label:$t${ENVS:+:$ENVS}" >/dev/null 2>&1
  done
done
python3 - "$out" "$((iters + warmup))" "$@" <<'EOF'
import os, re, sys
out, calls_per_run = sys.argv[1], int(sys.argv[2])
labels = [os.path.basename(os.path.abspath(d)) for d in sys.argv[3:]]
entry = re.compile(r"^plugin_call_timer rank 0 (\w+) calls (\d+) total_us ([\d.]+)")
result = re.compile(r"^rank 0 bytes (\d+) time_us ([\d.]+) wrong (\d+)(?: host_us ([\d.]+))?")
for label in labels:
    for run in sorted(n for n in os.listdir(out) if n.startswith(label + "-")):
        log = os.path.join(out, run, "allreduce", f"{label}_r1.txt")
        if not os.path.exists(log):
            print(f"{run}: no log"); continue
        lines = open(log).read().splitlines()
        seen, rows, head = set(), [], ""
        for l in lines:
            m = result.match(l)
            if m:
                head = f"time_us {m.group(2)} host_us {m.group(4)} wrong {m.group(3)}"
            m = entry.match(l)
            if m and m.group(1) not in seen:
                seen.add(m.group(1))
                rows.append((m.group(1), int(m.group(2)) / calls_per_run, float(m.group(3)) / calls_per_run))
        total = sum(r[2] for r in rows)
        print(f"\n{run} ({head}): {total:.1f} us of plugin calls per all-reduce")
        print("| entry | calls per all-reduce | us per all-reduce | us per call |\n|---|---|---|---|")
        for name, n, us in sorted(rows, key=lambda r: -r[2]):
            print(f"| {name} | {n:.1f} | {us:.1f} | {us / n if n else 0:.2f} |")
EOF
