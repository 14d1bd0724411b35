#!/usr/bin/env bash
# all_reduce 4 ranks (2 domains x 2 GPUs), as 2 hosts and on one host, under several chunk settings.
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_UCX=off
one() { local name=$1 hosts=$2; shift 2; echo "== $name"; timeout -k 5 120 env "$@" $B/tools/hetccl-run -n 4 --domains 2 $hosts --timeout 110 -- \
  $B/tools/hetccl-perf all_reduce -G -b ${MIN:-4M} -e 256M -f 4 -n 10 -w 3 -c 1 > $OUT/$name.txt 2>&1; echo "rc=$?"; grep -E "^ +[0-9]+ " $OUT/$name.txt; }
H="--host-ids 2"
one hosts_auto "$H" X=1
one hosts_hier32 "$H" HETCCL_HIER_CHUNK_BYTES=32M
one hosts_hier64 "$H" HETCCL_HIER_CHUNK_BYTES=64M
one hosts_hier256 "$H" HETCCL_HIER_CHUNK_BYTES=256M
one hosts_hier64_gpu1 "$H" HETCCL_HIER_CHUNK_BYTES=64M HETCCL_GPU_CHUNK_BYTES=1M
one hosts_gpu1 "$H" HETCCL_GPU_CHUNK_BYTES=1M
one hosts_pipeline "$H" HETCCL_GPU_EXEC=pipeline
one host1_auto "" X=1
one host1_hier64 "" HETCCL_HIER_CHUNK_BYTES=64M
one host1_pipeline "" HETCCL_GPU_EXEC=pipeline
