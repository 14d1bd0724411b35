#!/usr/bin/env bash
# Builds the CUDA plugin and the GPU tests (Release) and runs every test labelled "gpu", on a machine with
# a CUDA device. A missing plugin or device fails here instead of skipping (HETCCL_TEST_REQUIRE_GPU=1).
# Logs go to $OUT when it is set (the device tool), else to the build directory.
#   usage: tests/gpu/run_on_device.sh [build-dir]      (default: build-gpu-device in the repository)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-gpu-device}
logs=${OUT:-$build/gpu-logs}
mkdir -p "$logs"

{
  nvidia-smi || true
  /usr/local/cuda/bin/nvcc --version || true
} >"$logs/device.txt" 2>&1

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release 2>&1 | tee "$logs/configure.log"
ninja -C "$build" -j16 hetccl-cuda gpu_runtime_test coll_check_gpu stream_semantics coll_check hetccl-run 2>&1 | tee "$logs/build.log"

status=0
HETCCL_TEST_REQUIRE_GPU=1 ctest --test-dir "$build" -L gpu --output-on-failure --timeout 120 \
  --output-junit "$logs/ctest-gpu.xml" 2>&1 | tee "$logs/ctest-gpu.log" || status=$?
cp "$build/Testing/Temporary/LastTest.log" "$logs/" 2>/dev/null || true

# Which flag method the device uses, and the plugin's own log lines.
HETCCL_DEBUG=INFO HETCCL_CUDA_PLUGIN="$build/libhetccl-cuda.so" "$build/tests/gpu/gpu_runtime_test" \
  --gtest_filter='GpuMemoryTest.PointerQuery*:Methods/GpuFlagTest.Stream*' >"$logs/plugin-info.log" 2>&1 || true

echo "gpu tests exit status: $status (logs in $logs)"
exit "$status"
