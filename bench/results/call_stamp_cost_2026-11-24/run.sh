#!/usr/bin/env bash
# Call stamp cost: hetccl-perf all_reduce latency, baseline (main) and stamps builds interleaved in one run.
# usage: run.sh MAIN_BUILD STAMPS_BUILD ROUNDS
set -u
main=$1 stamps=$2 rounds=${3:-5}
for transport in shm tcp; do
  for size in 8 64K 1M; do
    iters=2000; [ "$size" = 1M ] && iters=200
    for round in $(seq 1 "$rounds"); do
      for build in main stamps; do
        dir=$main; [ $build = stamps ] && dir=$stamps
        line=$(HETCCL_TRANSPORT=$transport "$dir/tools/hetccl-run" -n 2 --timeout 120 -- \
               "$dir/tools/hetccl-perf" all_reduce -b $size -e $size -n $iters -w 100 -c 0 2>/dev/null |
               awk '$1 ~ /^[0-9]+$/ {print $0; exit}')
        echo "$transport $size $build $round | $line"
      done
    done
  done
done
