#!/bin/bash
# Exactness of the AVX2/F16C host kernels on the H100 machine: float16 / bfloat16 all-reduce and reduce
# with every operator between two "hosts" (tcp), device buffers (host staging in pieces) and host buffers,
# results checked by hetccl-perf (-c 1). Run from the repository root with a build in .dev/build.
B=$PWD/.dev/build; export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64 HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_UCX=off
grep -o -m1 f16c /proc/cpuinfo
for dev in cuda host; do
  args="-n 2 --host-ids 2"; g=""; [ $dev = cuda ] && args="$args --domains 2" && g="-G"
  for d in half bfloat16; do
    for c in "all_reduce -o sum" "all_reduce -o avg" "all_reduce -o max" "all_reduce -o min" "all_reduce -o prod" "reduce -r 1 -o premulsum"; do
      out=$(HETCCL_DEVICE=$dev HETCCL_STAGED_PIECE_BYTES=256K timeout 120 $B/tools/hetccl-run $args --timeout 100 -- $B/tools/hetccl-perf $c $g -d $d -b 2 -e 8M -f 8 -n 2 -w 1 -c 1 2>&1); rc=$?
      echo "$dev | $d | $c | rc=$rc | rows: $(grep -cE '^ +[0-9]+ ' <<<"$out") | rows with wrong elements: $(grep -E '^ +[0-9]+ ' <<<"$out" | awk '$9 != 0 || ($13 != 0 && $13 != "N/A")' | wc -l)"
    done
  done
done
nvidia-smi -L
