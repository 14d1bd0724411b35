#!/usr/bin/env bash
# GPU ranks on different "hosts" (HETCCL_HOST_ID): the stream pipeline between hosts (HETCCL_GPU_EXEC=pipeline:
# GPU rings mirrored by the ring proxy over tcp) against host staging in pieces (today's default between
# hosts) and Gloo on CUDA tensors, in one run. One GPU is enough for correctness and the ratios: two ranks
# on GPU 0 in two domains as two hosts, over loopback. Run from the repository root on the device machine:
#
#   OUT=$OUT BUILD=build-gpu bash bench/gpu/run_net_pipeline_bench.sh
#
#   BUILD    a hetccl build with the CUDA plugin (tools/hetccl-run, tools/hetccl-perf, libhetccl*.so)
#   COLLS    collectives (default "all_reduce all_gather"); MIN/MAX hetccl-perf -b/-e (default 1M..256M, x4)
#   ITERS/WARMUP (default 10/3); REPS rounds of each configuration, interleaved (default 2)
#   CHECK    collectives run once more at small and odd sizes with every result checked (correctness only)
# Every result is checked exactly (-c 1). Raw outputs in $OUT/raw.tgz, machine info in $OUT/machine.txt.
set -u -o pipefail
COLLS=${COLLS:-"all_reduce all_gather"}
CHECK=${CHECK:-"all_reduce broadcast reduce all_gather reduce_scatter alltoall sendrecv"}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/net_bench_lib.sh"
bench_settings
export HETCCL_UCX=off
write_machine_info
perf() {  # perf NAME COLL MIN MAX VAR=VALUE...
  local name=$1 coll=$2 lo=$3 hi=$4; shift 4
  run "$name" 150 HETCCL_DEBUG=INFO "$@" \
    "$BUILD/tools/hetccl-run" -n 2 --domains 2 --host-ids 2 --timeout 140 -- \
    "$BUILD/tools/hetccl-perf" "$coll" -G -b "$lo" -e "$hi" -f 4 -n "$ITERS" -w "$WARMUP" -c 1
}

# Correctness first: every collective through the pipeline between hosts, odd sizes included.
for c in $CHECK; do perf "check_$c" "$c" 4 4M HETCCL_GPU_EXEC=pipeline; done
for rep in $(seq 1 "$REPS"); do
  for c in $COLLS; do
    perf "${c}_staged_r$rep" "$c" "$MIN" "$MAX"
    perf "${c}_pipeline_r$rep" "$c" "$MIN" "$MAX" HETCCL_GPU_EXEC=pipeline
  done
done
run gloo_cuda 200 torchrun --standalone --nproc_per_node=2 "$HERE/torch_colls.py" --backend gloo --colls all_reduce \
  -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w "$WARMUP"
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
