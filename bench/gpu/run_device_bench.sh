#!/usr/bin/env bash
# One run of every GPU benchmark of issue 3 on a 2-GPU machine (nvidia-h200-x2), side by side with NCCL and
# Gloo through PyTorch, then the markdown report $OUT/device_bench.md. Run from the repository root:
#
#   TORCH_BASELINE=/path/to/torch_baseline.py OUT=./out bash bench/gpu/run_device_bench.sh
#
# Environment:
#   TORCH_BASELINE  a copy of ../shared/bench/torch_baseline.py (the shared folder is not on the device
#                   machine: carry a copy there); without it the NCCL/Gloo baselines are skipped
#   OUT             output folder (default ./out): raw/ (every raw output), machine.txt, commands.tsv,
#                   steps.tsv (rc and seconds per command), device_bench.md
#   BUILD_DIR       hetccl build folder (default build-device-bench; reused when already built)
#   STEPS           the steps to run, in order (default: all):
#                   info build copy hetccl1 nccl hetccl2x1 hetccl2x2 tcp summary
#   ITERS, WARMUP   timed and warm-up iterations of every size (default 20 and 5, as torch_baseline.py)
#   MAX_BYTES       largest size (default 1G); GLOO_MAX_BYTES (default 256M)
#   HETCCL_DEVICE   passed to every hetccl rank (default cuda: fail rather than fall back to host ranks)
#   REPS            repetitions of every hetccl and torch measurement (default 1; the report takes the median)
# Every command has its own timeout; a failed or timed-out command is recorded and the script goes on.
# NCCL_NVLS_ENABLE=0 is exported throughout.
set -u -o pipefail

OUT=${OUT:-./out}
BUILD_DIR=${BUILD_DIR:-build-device-bench}
STEPS=${STEPS:-info build copy hetccl1 nccl hetccl2x1 hetccl2x2 tcp summary}
ITERS=${ITERS:-20}
REPS=${REPS:-1}
WARMUP=${WARMUP:-5}
MAX_BYTES=${MAX_BYTES:-1G}
GLOO_MAX_BYTES=${GLOO_MAX_BYTES:-256M}
HETCCL_DEVICE=${HETCCL_DEVICE:-cuda}
TORCH_BASELINE=${TORCH_BASELINE:-}
HERE=$(cd "$(dirname "$0")" && pwd)
COLLS="all_reduce all_gather reduce_scatter alltoall"

# shellcheck source=bench/gpu/bench_lib.sh
. "$HERE/bench_lib.sh"

step_copy() {
  run pinned_copy 90 python3 "$HERE/pinned_copy_bw.py" --mb 256 --reps 5
}

step_hetccl1() {  # one domain: every rank in the default domain ("cuda")
  perf hetccl1_all_reduce 150 -n 2 -- all_reduce -b 1K -e "$MAX_BYTES" -f 4
  perf hetccl1_all_reduce_8B 40 -n 2 -- all_reduce -b 8 -e 8 -n 1000 -w 100
}

step_nccl() {
  if [ -z "$TORCH_BASELINE" ] || [ ! -f "$TORCH_BASELINE" ]; then
    echo "TORCH_BASELINE is not a file ('$TORCH_BASELINE'): NCCL and Gloo baselines skipped" | tee "$RAW/nccl_skipped.txt"
    return
  fi
  local max gmax coll lo
  max=$(bytes_of "$MAX_BYTES")
  gmax=$(bytes_of "$GLOO_MAX_BYTES")
  for coll in $COLLS; do
    local tcoll=$coll
    [ "$coll" = alltoall ] && tcoll=all_to_all
    # torch_baseline.py labels all_gather by its output (size x 2 ranks): start at 512 to get 1K..MAX rows.
    lo=1024
    local hi=$max ghi=$gmax
    if [ "$coll" = all_gather ]; then lo=512; hi=$((max / 2)); ghi=$((gmax / 2)); fi
    local args=(--coll "$tcoll" -b "$lo" -f 4 -n "$ITERS" -w "$WARMUP")
    torch_run "nccl_default_$coll" 90 -- --backend nccl "${args[@]}" -e "$hi"
    torch_run "nccl_host_$coll" 120 NCCL_P2P_DISABLE=1 -- --backend nccl "${args[@]}" -e "$hi"
    torch_run "gloo_$coll" 120 -- --backend gloo --device cuda "${args[@]}" -e "$ghi"
  done
  torch_run nccl_socket_all_reduce 150 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- --backend nccl \
    --coll all_reduce -b 1024 -e "$max" -f 4 -n "$ITERS" -w "$WARMUP"
  torch_run nccl_default_all_reduce_8B 60 -- --backend nccl --coll all_reduce -b 8 -e 8 -n 1000 -w 100
}

step_hetccl2x1() {  # two domains of one GPU each
  local coll
  for coll in $COLLS; do
    perf "hetccl2x1_$coll" 150 -n 2 --domains 2 -- "$coll" -b 1K -e "$MAX_BYTES" -f 4
  done
}

step_hetccl2x2() {  # 4 ranks: d0 = ranks 0,1 on GPUs 0,1; d1 = ranks 2,3 on GPUs 0,1 (device = local rank % 2)
  local coll
  for coll in $COLLS; do
    perf "hetccl2x2_$coll" 150 -n 4 --domains 2 --layout blocks -- "$coll" -b 1K -e "$MAX_BYTES" -f 4
  done
}

step_tcp() {  # two domains on "different hosts" (HETCCL_HOST_ID h0, h1): the bytes go over tcp
  perf hetccltcp_all_reduce 180 -n 2 --domains 2 --host-ids 2 -- all_reduce -b 1K -e "$MAX_BYTES" -f 4
}

step_summary() {
  python3 "$HERE/summarize_device_bench.py" "$OUT" && echo "report: $OUT/device_bench.md"
}

find_torch_nccl
for s in $STEPS; do
  case $s in
    info | build | copy | hetccl1 | nccl | hetccl2x1 | hetccl2x2 | tcp | summary) "step_$s" ;;
    *) echo "unknown step '$s' (info build copy hetccl1 nccl hetccl2x1 hetccl2x2 tcp summary)"; exit 2 ;;
  esac
done
echo "done in $(($(date +%s) - SCRIPT_START)) s; raw outputs in $RAW"
