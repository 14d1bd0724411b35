#!/usr/bin/env bash
# Scaling benchmark (issue 6) on one machine with 4 or 8 GPUs: hetccl in two domains of one GPU per rank,
# equal and unequal (4 GPUs: 2+2 and 3+1; 8 GPUs: 4+4 and 6+2), against NCCL on the same GPUs (one
# domain), NCCL's host path (NCCL_P2P_DISABLE=1) and Gloo, with the pinned copy bandwidth of every GPU
# measured in the same run, and the bytes every rank moved (HETCCL_DEBUG=INFO, ENGINE). Run from the
# repository root; run it once per GPU count into the same OUT:
#
#   OUT=./out NGPUS=4 bash bench/gpu/run_scaling_bench.sh
#   OUT=./out NGPUS=8 STEPS="copy hetccl traffic torch summary" bash bench/gpu/run_scaling_bench.sh
#
# Environment:
#   NGPUS       GPUs to use (default: every visible one); CUDA_VISIBLE_DEVICES is set to the first NGPUS
#   LAYOUTS     domain sizes to run, space-separated (default: "2,2 3,1" on 4 GPUs, "4,4 6,2" on 8)
#   STEPS       in order (default: info build copy hetccl traffic torch summary)
#   OUT, BUILD_DIR, ITERS, WARMUP, REPS, HETCCL_DEVICE   as in run_device_bench.sh
#   MIN_BYTES, MAX_BYTES, FACTOR   size sweep (default 1K, 1G, 4); GLOO_MAX_BYTES (default 256M)
#   TIME_BUDGET   seconds after which the remaining steps are skipped (default 1e9), so that a caller with a
#               wall-clock limit still gets its summary
# Raw outputs are named g${NGPUS}_*: hetccl_dom1_COLL, hetccl_L_COLL (L = layout with 'p' for ','),
# traffic_L_COLL, torch_nccl, torch_nccl_host, torch_gloo, pinned_copy. Every command has its own timeout.
set -u -o pipefail

OUT=${OUT:-./out}
BUILD_DIR=${BUILD_DIR:-build-scaling-bench}
STEPS=${STEPS:-info build copy hetccl traffic torch summary}
ITERS=${ITERS:-20}
REPS=${REPS:-1}
WARMUP=${WARMUP:-5}
MIN_BYTES=${MIN_BYTES:-1K}
MAX_BYTES=${MAX_BYTES:-1G}
FACTOR=${FACTOR:-4}
GLOO_MAX_BYTES=${GLOO_MAX_BYTES:-256M}
HETCCL_DEVICE=${HETCCL_DEVICE:-cuda}
TIME_BUDGET=${TIME_BUDGET:-1000000000}
HERE=$(cd "$(dirname "$0")" && pwd)
COLLS="all_reduce all_gather reduce_scatter alltoall"

# shellcheck source=bench/gpu/bench_lib.sh
. "$HERE/bench_lib.sh"

VISIBLE=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
NGPUS=${NGPUS:-$VISIBLE}
if [ "$NGPUS" -lt 2 ] || [ "$NGPUS" -gt "$VISIBLE" ]; then
  echo "NGPUS=$NGPUS but $VISIBLE GPU(s) are visible"
  exit 2
fi
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPUS - 1)))
NPROC=$NGPUS
case $NGPUS in
  4) LAYOUTS=${LAYOUTS:-"2,2 3,1"} ;;
  8) LAYOUTS=${LAYOUTS:-"4,4 6,2"} ;;
  *) LAYOUTS=${LAYOUTS:-"$((NGPUS / 2)),$((NGPUS - NGPUS / 2))"} ;;
esac
G=g$NGPUS

step_copy() {
  run "${G}_pinned_copy" 120 python3 "$HERE/pinned_copy_bw.py" --mb 256 --reps 5
}

step_hetccl() {
  local coll layout
  perf "${G}_hetccl_dom1_all_reduce" 150 -n "$NGPUS" -- all_reduce -b "$MIN_BYTES" -e "$MAX_BYTES" -f "$FACTOR"
  for layout in $LAYOUTS; do
    for coll in $COLLS; do
      over_budget && return
      perf "${G}_hetccl_${layout/,/p}_$coll" 180 -n "$NGPUS" --domains 2 --layout "$layout" -- \
        "$coll" -b "$MIN_BYTES" -e "$MAX_BYTES" -f "$FACTOR"
    done
  done
}

# One size (TRAFFIC_BYTES, default 256M) per layout and collective with every rank logging the bytes its
# device pipeline moved to and from each peer and in how many groups (HETCCL_DEBUG=INFO, ENGINE): bytes per
# call over the time per call is each rank's link rate.
step_traffic() {
  local coll layout size=${TRAFFIC_BYTES:-256M}
  for layout in $LAYOUTS; do
    for coll in $COLLS; do
      over_budget && return
      HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=ENGINE perf "${G}_traffic_${layout/,/p}_$coll" 90 -n "$NGPUS" \
        --domains 2 --layout "$layout" -- "$coll" -b "$size" -e "$size" -n 10 -w 2
    done
  done
}

step_torch() {
  local args=(-b "$MIN_BYTES" -f "$FACTOR" -n "$ITERS" -w "$WARMUP")
  local k
  for k in $(seq 1 "$REPS"); do
    over_budget && return
    run "$(rep_name "${G}_torch_nccl" "$k")" 240 torchrun --standalone --nproc_per_node="$NGPUS" \
      "$HERE/torch_colls.py" --backend nccl -e "$MAX_BYTES" "${args[@]}"
    run "$(rep_name "${G}_torch_nccl_host" "$k")" 300 NCCL_P2P_DISABLE=1 torchrun --standalone \
      --nproc_per_node="$NGPUS" "$HERE/torch_colls.py" --backend nccl -e "$MAX_BYTES" "${args[@]}"
    over_budget && return
    run "$(rep_name "${G}_torch_gloo" "$k")" 300 torchrun --standalone --nproc_per_node="$NGPUS" \
      "$HERE/torch_colls.py" --backend gloo -e "$GLOO_MAX_BYTES" "${args[@]}"
  done
}

step_summary() {
  python3 "$HERE/summarize_scaling_bench.py" "$OUT" && echo "report: $OUT/scaling_bench.md"
}

over_budget() {
  if [ $(($(date +%s) - SCRIPT_START)) -ge "$TIME_BUDGET" ]; then
    echo "TIME_BUDGET ($TIME_BUDGET s) spent: skipping the rest of this step" | tee -a "$RAW/${G}_skipped.txt"
    return 0
  fi
  return 1
}

find_torch_nccl
for s in $STEPS; do
  case $s in
    info | build | copy | hetccl | traffic | torch | summary) "step_$s" ;;
    *) echo "unknown step '$s' (info build copy hetccl traffic torch summary)"; exit 2 ;;
  esac
done
echo "done in $(($(date +%s) - SCRIPT_START)) s; raw outputs in $RAW"
