#!/usr/bin/env bash
# Stream pipeline before (old: main at ea3b5e9, flag counters) and after (new: merged main, constant
# per-slot handshakes and call stamps) the CUDA-graph work, interleaved, 2 rounds each; 2 ranks in two
# domains time-slicing GPU 0 — a regression check, not performance evidence for two GPUs.
set -uo pipefail
o=${OUT:-/tmp/perf-out}; mkdir -p "$o"
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=60 HETCCL_DEVICE=cuda
for l in libhetccl.so.0 libhetccl.so; do [[ -e .dev/build/$l ]] || ln -s libhetccl.so.0.1.0 .dev/build/$l; done
for round in 1 2; do for v in old new; do
  if [[ $v == old ]]; then d=$PWD/.dev/graphs/old; run=$d/hetccl-run; perf=$d/hetccl-perf; lib=$d
  else d=$PWD/.dev/build; run=$d/tools/hetccl-run; perf=$d/tools/hetccl-perf; lib=$d; fi
  echo "#### $v round $round"
  LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64 HETCCL_CUDA_PLUGIN=$lib/libhetccl-cuda.so timeout 100 \
    "$run" -n 2 --domains 2 --timeout 95 -- "$perf" all_reduce -G -b 64K -e 256M -f 4 -n 10 -w 3 2>&1 | grep -E "^ +[0-9]|rror"
done; done | tee "$o/perf_old_new.txt"
