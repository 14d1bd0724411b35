#!/bin/bash
# Correctness of host staging in pieces on a real GPU: two ranks on GPU 0, two domains, two hosts.
B=$PWD/.dev/build; export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$PWD/.dev/ucx/lib HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT
for t in tcp ucx; do
  extra="HETCCL_UCX=off"; [ $t = ucx ] && extra="HETCCL_UCX=on HETCCL_UCX_LIB=$PWD/.dev/ucx/lib/libucp.so.0 UCX_TLS=tcp"
  for c in "all_reduce" "all_reduce -d bfloat16 -o avg" "all_reduce -d int64 -o max" "broadcast -r 1" "reduce -r 1 -d double -o premulsum" "all_gather"; do
    out=$(env $extra HETCCL_STAGED_PIECE_BYTES=256K HETCCL_STAGED_SLOTS=3 timeout 120 $B/tools/hetccl-run -n 2 --domains 2 --host-ids 2 --timeout 100 -- $B/tools/hetccl-perf $c -G -b 8 -e 64M -f 8 -n 3 -w 1 -c 1 2>&1); rc=$?
    echo "$t | $c | rc=$rc | $(grep -o 'device calls: [^(]*' <<<"$out" | head -1) | wrong: $(grep -c 'FAILED' <<<"$out") | rows: $(grep -cE '^ +[0-9]+ ' <<<"$out")"
  done
done
git rev-parse --short HEAD 2>/dev/null; nvidia-smi -L
