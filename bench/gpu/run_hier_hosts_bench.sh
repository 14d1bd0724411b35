#!/usr/bin/env bash
# Vendor-homogeneous "hosts" joined by a network (HETCCL_HOST_ID): 4 GPU ranks, one per GPU, in 2 domains
# of 2 ranks, a domain per host (hetccl-run --domains 2 --host-ids 2: rank r in domain r % 2 on host r % 2),
# over loopback tcp. hetccl's auto path there (the stream pipeline with NCCL inside each domain: only the
# cross-domain share crosses the network, through the ring proxy) against host staging in pieces
# (HETCCL_GPU_EXEC=staged, auto's choice before), the stream pipeline alone (HETCCL_GPU_EXEC=pipeline),
# NCCL with the ranks as the same two hosts over its socket transport (NCCL_HOSTID, NCCL_NET=Socket: NVLink
# inside a host, sockets between) and Gloo on CUDA tensors, in one run. Needs 4 GPUs. From the repository
# root on the device machine:
#
#   OUT=$OUT BUILD=build-gpu bash bench/gpu/run_hier_hosts_bench.sh
#
#   BUILD    a hetccl build with the CUDA plugin (tools/hetccl-run, tools/hetccl-perf, libhetccl*.so)
#   COLLS    collectives (default "all_reduce all_gather"); MIN/MAX hetccl-perf -b/-e (default 1M..256M, x4)
#   ITERS/WARMUP (default 10/3); REPS rounds of each hetccl configuration, interleaved (default 2)
# Every hetccl result is checked exactly (-c 1); the torch runs check each size once. Raw outputs in
# $OUT/raw.tgz (each hetccl run's INFO log says which path it took), machine info in $OUT/machine.txt.
set -u -o pipefail
COLLS=${COLLS:-"all_reduce all_gather"}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/net_bench_lib.sh"
bench_settings
export HETCCL_UCX=off
write_machine_info
gpus=$(nvidia-smi -L | wc -l)
if [ "$gpus" -lt 4 ]; then echo "needs 4 GPUs, found $gpus" >&2; exit 77; fi
perf() {  # perf NAME COLL VAR=VALUE...
  local name=$1 coll=$2; shift 2
  run "$name" 240 HETCCL_DEBUG=INFO "$@" \
    "$BUILD/tools/hetccl-run" -n 4 --domains 2 --host-ids 2 --timeout 230 -- \
    "$BUILD/tools/hetccl-perf" "$coll" -G -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w "$WARMUP" -c 1
  grep -m1 -o "device calls: [^:]*" "$RAW/$name.txt"
}
for rep in $(seq 1 "$REPS"); do
  for c in $COLLS; do
    perf "${c}_auto_r$rep" "$c"
    perf "${c}_staged_r$rep" "$c" HETCCL_GPU_EXEC=staged
    perf "${c}_pipeline_r$rep" "$c" HETCCL_GPU_EXEC=pipeline
  done
done
torch_colls() {  # torch_colls NAME VAR=VALUE... -- ARGS...
  local name=$1; shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  run "$name" 300 "${vars[@]}" torchrun --standalone --nproc_per_node=4 "$HERE/torch_colls.py" \
    --colls "$(echo "$COLLS" | tr ' ' ',')" -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w "$WARMUP" "$@"
}
torch_colls nccl_socket_as_hosts NCCL_NET=Socket NCCL_IB_DISABLE=1 -- --backend nccl --as-hosts 2
torch_colls gloo_cuda HETCCL_UNUSED=1 -- --backend gloo
torch_colls nccl_one_host HETCCL_UNUSED=1 -- --backend nccl
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
