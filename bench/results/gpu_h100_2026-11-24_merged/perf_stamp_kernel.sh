#!/usr/bin/env bash
# Is the per-piece stamp-check kernel the cause of the slowdown of perf_old_new.txt? The same build with
# its CUDA plugin as shipped (new) and with a plugin that drops STAMP_CHECK operations (nostamp: an
# experiment build, src/device/cuda/stream_ops.cc filtering them out; never shipped), interleaved, 2 rounds.
set -uo pipefail
o=${OUT:-/tmp/perf-out}; mkdir -p "$o"
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=60 HETCCL_DEVICE=cuda LD_LIBRARY_PATH=$PWD/.dev/build:/usr/local/cuda/lib64
for l in libhetccl.so.0 libhetccl.so; do [[ -e .dev/build/$l ]] || ln -s libhetccl.so.0.1.0 .dev/build/$l; done
b=$PWD/.dev/build
for round in 1 2; do for v in new nostamp; do
  plugin=$b/libhetccl-cuda.so; [[ $v == nostamp ]] && plugin=$PWD/.dev/nostamp/libhetccl-cuda.so
  echo "#### $v round $round"
  HETCCL_CUDA_PLUGIN=$plugin timeout 100 "$b/tools/hetccl-run" -n 2 --domains 2 --timeout 95 -- \
    "$b/tools/hetccl-perf" all_reduce -G -b 64K -e 256M -f 4 -n 10 -w 3 2>&1 | grep -E "^ +[0-9]|rror"
done; done | tee "$o/perf_stamp_kernel.txt"
