#!/usr/bin/env bash
# 4 GPU ranks as 2 hosts (a domain of 2 per host), auto (NCCL in domains) with several
# HETCCL_HIER_NET_MIN_CHUNK_BYTES, against the pipeline alone and host staging; REPS rounds, interleaved.
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_UCX=off
one() { local name=$1 coll=$2; shift 2; echo "== $name"; timeout -k 5 120 env HETCCL_DEBUG=INFO "$@" $B/tools/hetccl-run -n 4 --domains 2 --host-ids 2 --timeout 110 -- \
  $B/tools/hetccl-perf $coll -G -b 1M -e 256M -f 4 -n 10 -w 3 -c 1 > $OUT/$name.txt 2>&1; echo "rc=$?"; grep -E "^ +[0-9]+ " $OUT/$name.txt; }
for rep in 1 2; do
  for c in all_reduce all_gather; do
    one ${c}_net1M_r$rep $c HETCCL_HIER_NET_MIN_CHUNK_BYTES=1M
    one ${c}_net16M_r$rep $c X=1
    one ${c}_net64M_r$rep $c HETCCL_HIER_NET_MIN_CHUNK_BYTES=64M
    one ${c}_pipeline_r$rep $c HETCCL_GPU_EXEC=pipeline
    [ $rep = 1 ] && one ${c}_staged_r$rep $c HETCCL_GPU_EXEC=staged
  done
done
