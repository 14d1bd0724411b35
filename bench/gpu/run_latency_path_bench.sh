#!/usr/bin/env bash
# The latency path (src/exec/pipeline/ll_path.hpp) on real GPUs, in one run on one machine:
#  1. all-reduce time per call, 8 B - 1 MiB, on 1+1 (2 GPUs, two domains) and 2+2 (4 GPUs, when there):
#     hetccl with the path (default HETCCL_GPU_LL_BYTES) and without it (HETCCL_GPU_LL_BYTES=0: the stream
#     pipeline alone, what every call took before), NCCL's host path (NCCL_P2P_DISABLE=1) and NCCL's
#     default, all measured the same way (hetccl-perf and bench/gpu/nccl_allreduce_time.cu: N calls back to
#     back, wall time / N), rounds interleaved (off, on, NCCL host, NCCL) ROUNDS times;
#  2. correctness on the GPUs: coll_check_gpu at small counts, graph_check with a small count (captured
#     calls of the path replayed between eager ones), mismatch_check_gpu with 16 floats (ranks whose counts
#     differ on the path), and two ranks sharing one GPU (it works there too, but time-slices: no speed).
#   OUT=./out BUILD_DIR=devbin TESTS_DIR=devbin/t NCCL_TIME=devbin/nccl_allreduce_time \
#     bash bench/gpu/run_latency_path_bench.sh
# BUILD_DIR holds tools/hetccl-perf, tools/hetccl-run, libhetccl-cuda.so (PLUGIN: another plugin file); TESTS_DIR
# the GPU test binaries.
# LAYOUTS (default "1p1 2p2"; 1dom: 2 GPUs in one domain, where hetccl delegates to NCCL), MAX (1M), ITERS (200), WARMUP (20), ROUNDS (3), CHECKS (1; 0 skips part 2).
# VARIANTS: more hetccl runs per round, "NAME:VAR=VALUE,VAR=VALUE NAME2:..." (e.g. the path up to 1 MiB:
# "ll1m:HETCCL_GPU_LL_BYTES=1M"), each a column of the summary.
# Summary: python3 bench/gpu/summarize_latency_path.py $OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
BUILD_DIR=${BUILD_DIR:?set BUILD_DIR}
TESTS_DIR=${TESTS_DIR:-$BUILD_DIR/t}
NCCL_TIME=${NCCL_TIME:-$BUILD_DIR/nccl_allreduce_time}
ITERS=${ITERS:-200}
WARMUP=${WARMUP:-20}
REPS=1
HETCCL_DEVICE=cuda
TORCH_BASELINE=unused
# shellcheck source=bench/gpu/bench_lib.sh
source bench/gpu/bench_lib.sh
export HETCCL_CUDA_PLUGIN=${PLUGIN:-$BUILD_DIR/libhetccl-cuda.so} HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-60}
step_info

# nccl_time NAME N [VAR=VALUE...]: N processes of NCCL_TIME, one per GPU.
nccl_time() {
  local name=$1 n=$2
  shift 2
  run "$name" 120 "$@" N="$n" BIN="$NCCL_TIME" ID="/tmp/nccl-time-id-$$-$name" ARGS="-b 8 -e ${MAX:-1M} -f 2 -n $ITERS -w $WARMUP" \
    bash -c 'for r in $(seq 0 $((N - 1))); do NCCL_TIME_RANK=$r NCCL_TIME_NRANKS=$N NCCL_TIME_ID_FILE=$ID $BIN $ARGS & done; wait'
}

gpus=$(nvidia-smi -L | wc -l)
for layout in ${LAYOUTS:-1p1 2p2}; do
  case $layout in
    1p1) n=2; launch=(-n 2 --domains 2) ;;
    2p2) n=4; launch=(-n 4 --domains 2 --layout blocks) ;;
    1dom) n=2; launch=(-n 2) ;;  # one domain, delegated whole to NCCL: hetccl's own cost per call
    *) echo "unknown layout $layout"; continue ;;
  esac
  if [ "$gpus" -lt "$n" ]; then echo "$layout: needs $n GPUs, $gpus here: skipped"; continue; fi
  for k in $(seq 1 "${ROUNDS:-3}"); do
    HETCCL_GPU_LL_BYTES=0 perf "${layout}_off.r$k" 200 "${launch[@]}" -- all_reduce -b 8 -e "${MAX:-1M}" -f 2
    perf "${layout}_ll.r$k" 200 "${launch[@]}" -- all_reduce -b 8 -e "${MAX:-1M}" -f 2
    for v in ${VARIANTS:-}; do
      eval "$(echo "${v#*:}" | tr ',' ' ') perf \"${layout}_v_${v%%:*}.r$k\" 200 \"\${launch[@]}\" -- all_reduce -b 8 -e \"${MAX:-1M}\" -f 2"
    done
    nccl_time "${layout}_nccl_host.r$k" "$n" NCCL_P2P_DISABLE=1
    nccl_time "${layout}_nccl.r$k" "$n"
  done
done

if [ "${CHECKS:-1}" = 1 ] && [ "$gpus" -ge 2 ]; then
  L=(-n 2 --domains 2 --timeout 280)
  run check_coll_1p1 300 "$LAUNCH" "${L[@]}" -- "$TESTS_DIR/coll_check_gpu" --sizes 1,7,1000,16384,16385
  run check_graph_1p1 300 "$LAUNCH" "${L[@]}" -- "$TESTS_DIR/graph_check" --count 100
  run check_mismatch_1p1 200 "$LAUNCH" -n 2 --domains 2 --timeout 190 -- "$TESTS_DIR/mismatch_check_gpu" 16
  if [ "$gpus" -ge 4 ]; then
    run check_coll_2p2 300 "$LAUNCH" -n 4 --domains 2 --layout blocks --timeout 280 -- "$TESTS_DIR/coll_check_gpu" --sizes 1,7,1000,16385
    run check_graph_2p2 300 "$LAUNCH" -n 4 --domains 2 --layout blocks --timeout 280 -- "$TESTS_DIR/graph_check" --count 100
  fi
  run check_coll_shared_gpu 300 CUDA_VISIBLE_DEVICES=0 "$LAUNCH" "${L[@]}" -- "$TESTS_DIR/coll_check_gpu" --sizes 1,1000 --types float32,int8 --ops sum,max
  run perf_shared_gpu 120 CUDA_VISIBLE_DEVICES=0 "$LAUNCH" -n 2 --domains 2 --timeout 110 -- "$PERF" all_reduce -G -b 8 -e 64K -f 8 -n 50 -w 5
fi
echo "done in $(($(date +%s) - SCRIPT_START)) s"
