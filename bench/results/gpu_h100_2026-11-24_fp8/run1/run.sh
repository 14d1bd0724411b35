#!/usr/bin/env bash
# fp8 verification on the GPU machine (prebuilt binaries from the h-fp8 worktree, stripped of debug info).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export HETCCL_CUDA_PLUGIN=$PWD/libhetccl-cuda.so NCCL_NVLS_ENABLE=0 HETCCL_TEST_REQUIRE_GPU=1
o=${OUT:-/tmp}
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version --format=csv; uname -a; } > $o/machine.txt 2>&1
echo "== fp8_nccl_rule"; timeout 60 ./fp8_nccl_rule 2>&1 | tee $o/fp8_nccl_rule.log; echo "rc=${PIPESTATUS[0]}"
echo "== gpu_runtime_test GpuReduceTest.*"; timeout 120 ./gpu_runtime_test --gtest_filter='GpuReduceTest.*' > $o/gpu_reduce_test.log 2>&1; echo "rc=$?"; grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|differ" $o/gpu_reduce_test.log | head -40
for t in f8e4m3 f8e5m2; do for op in sum avg max premulsum; do
  echo "== hetccl-perf all_reduce -d $t -o $op (2 ranks, 2 domains, GPU 0)"
  timeout 90 ./hetccl-run -n 2 --domains 2 --timeout 80 -- ./hetccl-perf all_reduce -b 1K -e 32M -f 8 -n 3 -w 1 -c 1 -d $t -o $op -G cuda > $o/perf_${t}_${op}.log 2>&1; echo "rc=$?"; grep -vE "^#  *(Using|Rank)" $o/perf_${t}_${op}.log | tail -12
done; done
