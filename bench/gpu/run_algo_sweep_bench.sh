#!/usr/bin/env bash
# Auto against every forced algorithm (HETCCL_ALGO=auto|rd|ring|hier) for all-reduce on device buffers,
# 8 B - 64 MiB, on 1+1 and 2+2 (one GPU per rank, two domains, one host), with NCCL's host path
# (NCCL_P2P_DISABLE=1, PyTorch's NCCL through bench/gpu/torch_colls.py) on the same GPUs in the same run:
# the data behind the selector's size thresholds ("auto never loses") and the small/mid-size gap.
# Each hetccl-perf run is repeated REPS times (the summary takes the median).
#   OUT=./out BUILD_DIR=build-dev bash bench/gpu/run_algo_sweep_bench.sh     (BUILD_DIR built already:
#   tools/hetccl-perf, tools/hetccl-run, libhetccl-cuda.so)
# LAYOUTS (default "1p1 2p2"; 2p2 needs 4 GPUs), ALGOS (default "auto rd ring hier"), MAX (64M),
# NCCL_BASELINE (1; 0 leaves out the torch/NCCL runs), TAG (a suffix for the raw file names: two builds
# compared in one OUT).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
BUILD_DIR=${BUILD_DIR:?set BUILD_DIR}
ITERS=${ITERS:-50}
WARMUP=${WARMUP:-10}
REPS=${REPS:-3}
HETCCL_DEVICE=cuda
TORCH_BASELINE=bench/gpu/torch_colls.py
# shellcheck source=bench/gpu/bench_lib.sh
source bench/gpu/bench_lib.sh
export HETCCL_CUDA_PLUGIN=$BUILD_DIR/libhetccl-cuda.so
step_info
find_torch_nccl

gpus=$(nvidia-smi -L | wc -l)
for layout in ${LAYOUTS:-1p1 2p2}; do
  case $layout in
    1p1) n=2; launch=(-n 2 --domains 2) ;;
    2p2) n=4; launch=(-n 4 --domains 2 --layout blocks) ;;
    *) echo "unknown layout $layout"; continue ;;
  esac
  if [ "$gpus" -lt "$n" ]; then echo "$layout: needs $n GPUs, $gpus here: skipped"; continue; fi
  for algo in ${ALGOS:-auto rd ring hier}; do
    HETCCL_ALGO=$algo perf "${layout}_${algo}${TAG:-}" 240 "${launch[@]}" -- all_reduce -b 8 -e "${MAX:-64M}" -f 4
  done
  [ "${NCCL_BASELINE:-1}" = 1 ] || continue
  NPROC=$n torch_run "${layout}_nccl_host" 240 NCCL_P2P_DISABLE=1 -- --backend nccl --colls all_reduce \
    -b 8 -e "${MAX:-64M}" -f 4 -n "$ITERS" -w "$WARMUP"
done
echo "done in $(($(date +%s) - SCRIPT_START)) s"
