#!/usr/bin/env bash
# allreduce_variants.sh ROUNDS VARIANT... : all-reduce time per call (float32 sum, out of place, results
# checked) of 2 ranks, one per GPU, under several variants, rounds interleaved, so that builds are compared
# with each other and with NCCL in one run on the same GPUs (issue 26). Every variant runs the same program,
# bench/gpu/nccl_allreduce_time.cu ($NCCL_TIME), against NCCL or against a hetccl drop-in.
#
# VARIANT is LABEL:MODE[:ENV=VALUE,...]; MODE is nccl (NCCL as it is: NVLink between these GPUs), ncclhost
# (NCCL_P2P_DISABLE=1: NCCL's path through host memory, the baseline for hetccl between domains), or a
# directory with a hetccl build (dropin/libnccl.so.2 preloaded, libhetccl-cuda.so), each rank its own domain
# (HETCCL_DOMAIN: the stream pipeline, or the latency path for small calls). Example:
#   NCCL_TIME=devbin-new/nccl_allreduce_time bash bench/gpu/allreduce_variants.sh 3 host:ncclhost base:devbin-base new:devbin-new
# Environment: NCCL_TIME (required), OUT (results; default ./allreduce-variants), SIZES ("-b 8 -e 256M -f 2"),
# ITERS (50), WARMUP (10). Prints, per size, each variant's median time over rounds (the slower rank of each
# round), its ratio to the first variant's (and the last variant's to the one before it), and exits 1 when
# any result was wrong.
set -uo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 ROUNDS LABEL:MODE[:ENV=V,...] ..." >&2; exit 2; }
rounds=$1
shift
prog=$(cd "$(dirname "${NCCL_TIME:?set NCCL_TIME}")" && pwd)/$(basename "$NCCL_TIME")
out=${OUT:-$PWD/allreduce-variants}/allreduce
mkdir -p "$out" && out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120}
for r in $(seq 1 "$rounds"); do
  for v in "$@"; do
    IFS=: read -r label mode envs <<<"$v"
    common=()
    [[ -n "$envs" ]] && IFS=, read -r -a common <<<"$envs"
    id=/tmp/allreduce-variants-$$-$label-$r
    log=$out/${label}_r$r.txt
    : >"$log"
    for rank in 0 1; do
      e=(NCCL_TIME_RANK=$rank NCCL_TIME_NRANKS=2 NCCL_TIME_ID_FILE=$id "${common[@]}")
      case $mode in
        nccl) ;;
        ncclhost) e+=(NCCL_P2P_DISABLE=1) ;;
        *) d=$(cd "$mode" && pwd) || exit 2
           e+=(LD_PRELOAD="$d/dropin/libnccl.so.2" HETCCL_CUDA_PLUGIN="$d/libhetccl-cuda.so" HETCCL_DOMAIN=d$rank) ;;
      esac
      timeout 300 env "${e[@]}" "$prog" ${SIZES:--b 8 -e 256M -f 2} -n "${ITERS:-50}" -w "${WARMUP:-10}" >>"$log" 2>&1 &
    done
    wait
  done
done
python3 - "$out" "$@" <<'EOF'
import collections, os, re, statistics, sys
out, variants = sys.argv[1], [v.split(":")[0] for v in sys.argv[2:]]
line = re.compile(r"^rank (\d+) bytes (\d+) time_us ([\d.]+) wrong (\d+)(?: host_us ([\d.]+))?")
times = collections.defaultdict(lambda: collections.defaultdict(list))  # label -> bytes -> [round time]
host = collections.defaultdict(lambda: collections.defaultdict(list))  # label -> bytes -> [round host time]
wrong = 0
for label in variants:
    for name in sorted(os.listdir(out)):
        if not (name.startswith(label + "_r") and name.endswith(".txt")):
            continue
        slowest, queued = collections.defaultdict(float), collections.defaultdict(float)
        for l in open(os.path.join(out, name)):
            m = line.match(l)
            if m:
                b = int(m.group(2))
                slowest[b] = max(slowest[b], float(m.group(3)))
                queued[b] = max(queued[b], float(m.group(5) or 0))
                wrong += int(m.group(4))
        for b, t in slowest.items():
            times[label][b].append(t)
            host[label][b].append(queued[b])
sizes = sorted({b for label in times for b in times[label]})
pairs = [(v, variants[0]) for v in variants[1:]]
if len(variants) >= 3:
    pairs.append((variants[-1], variants[-2]))
print("| bytes | " + " | ".join(f"{v} us" for v in variants) + " | " + " | ".join(f"{a} / {b}" for a, b in pairs) + " |")
print("|---" * (1 + len(variants) + len(pairs)) + "|")
for b in sizes:
    med = {v: statistics.median(times[v][b]) if times[v][b] else None for v in variants}
    cells = [f"{med[v]:.1f}" if med[v] else "-" for v in variants]
    ratios = [f"{med[a] / med[b]:.2f}" if med[a] and med[b] else "-" for a, b in pairs]
    print(f"| {b} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
print("\nHost time per call to queue the calls (us; where close to the time above, the host bounds it):\n")
print("| bytes | " + " | ".join(variants) + " |\n" + "|---" * (1 + len(variants)) + "|")
for b in sizes:
    print(f"| {b} | " + " | ".join(f"{statistics.median(host[v][b]):.1f}" if host[v][b] else "-" for v in variants) + " |")
print(f"\nwrong elements over all runs: {wrong}")
sys.exit(1 if wrong else 0)
EOF
