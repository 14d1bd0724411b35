#!/usr/bin/env bash
# GPU ranks on different "hosts" (HETCCL_HOST_ID): device buffers through host staging over tcp and ucx,
# today's whole-call staging (HETCCL_STAGED_PIECE_BYTES=0) against staging in pieces, and Gloo on CUDA
# tensors, all in one run. One GPU is enough: two ranks on GPU 0 in two domains as two hosts, over
# loopback (UCX_TLS=tcp, as between hosts). Run from the repository root on the device machine:
#
#   OUT=$OUT BUILD=.dev/build UCX_DIR=.dev/ucx bash bench/gpu/run_staged_net_bench.sh
#
#   BUILD    a hetccl build with the CUDA plugin (tools/hetccl-run, tools/hetccl-perf, libhetccl*.so)
#   UCX_DIR  optional: lib/ with libucp.so.0 and what it needs (where the machine has no UCX)
#   MIN/MAX  hetccl-perf -b/-e (default 1M..256M, x4); ITERS/WARMUP (default 10/3); REPS (default 2)
#   PIECES   piece sizes run besides the default, tcp only (default "4M 64M")
# Each rank's result is checked exactly (-c 1). Raw outputs in $OUT/raw, machine info in $OUT/machine.txt.
set -u -o pipefail
PIECES=${PIECES:-"4M 64M"}
BUILD=${BUILD:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/net_bench_lib.sh"
bench_settings
UCX_LIB=""
if [ -n "${UCX_DIR:-}" ] && [ -e "$UCX_DIR/lib/libucp.so.0" ]; then
  export LD_LIBRARY_PATH=$(cd "$UCX_DIR/lib" && pwd):$LD_LIBRARY_PATH
  UCX_LIB=$(cd "$UCX_DIR/lib" && pwd)/libucp.so.0
fi
write_machine_info "ucx: ${UCX_LIB:-none}"
perf() {  # perf NAME VAR=VALUE...
  local name=$1; shift
  run "$name" 150 "$@" "$BUILD/tools/hetccl-run" -n 2 --domains 2 --host-ids 2 --timeout 140 -- \
    "$BUILD/tools/hetccl-perf" all_reduce -G -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w "$WARMUP" -c 1
}

for rep in $(seq 1 "$REPS"); do
  perf "tcp_whole_r$rep" HETCCL_UCX=off HETCCL_STAGED_PIECE_BYTES=0
  perf "tcp_pieces_r$rep" HETCCL_UCX=off
  if [ -n "$UCX_LIB" ]; then
    perf "ucx_whole_r$rep" HETCCL_UCX=on HETCCL_UCX_LIB="$UCX_LIB" UCX_TLS=tcp HETCCL_STAGED_PIECE_BYTES=0
    perf "ucx_pieces_r$rep" HETCCL_UCX=on HETCCL_UCX_LIB="$UCX_LIB" UCX_TLS=tcp
  fi
done
for p in $PIECES; do perf "tcp_pieces_$p" HETCCL_UCX=off HETCCL_STAGED_PIECE_BYTES="$p"; done
run gloo_cuda 200 torchrun --standalone --nproc_per_node=2 "$HERE/torch_colls.py" --backend gloo --colls all_reduce \
  -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w "$WARMUP"
# The device tool returns few files: one archive of the raw outputs.
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
