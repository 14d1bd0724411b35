#!/usr/bin/env bash
# Builds the CUDA plugin and the GPU tests (Release) and runs every test labelled "gpu", on a machine with
# a CUDA device. A missing plugin or device fails here instead of skipping (HETCCL_TEST_REQUIRE_GPU=1).
# Logs go to $OUT when it is set (the device tool), else to the build directory.
#   usage: tests/gpu/run_on_device.sh [build-dir]      (default: build-gpu-device in the repository)
# HETCCL_PREBUILT=1: the build directory was built elsewhere (same paths); run its tests without building.
# HETCCL_CMAKE_ARGS: extra configure arguments (e.g. GTest_DIR / OPENSSL_ROOT_DIR of carried copies).
# HETCCL_CTEST_ARGS: extra ctest arguments (e.g. "-R gpu_mp"); HETCCL_CTEST_TIMEOUT: per-test seconds (120).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-gpu-device}
logs=${OUT:-$build/gpu-logs}
mkdir -p "$logs"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on shared machines

{
  nvidia-smi || true
  /usr/local/cuda/bin/nvcc --version || true
  dpkg -l 2>/dev/null | grep -E "libgtest|libssl-dev|ninja-build" || true
  command -v ninja cmake || true
} >"$logs/device.txt" 2>&1

if [[ "${HETCCL_PREBUILT:-0}" == 1 && -f "$build/CTestTestfile.cmake" ]]; then
  echo "run_on_device: using the prebuilt tree $build" | tee "$logs/build.log"
else
  generator="Unix Makefiles"
  command -v ninja >/dev/null && generator=Ninja
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
    ${HETCCL_CMAKE_ARGS:-} 2>&1 | tee "$logs/configure.log"
  keep_going=()
  [[ $generator == Ninja ]] && keep_going=(-- -k 0)  # build what builds; ctest reports the rest as not run
  cmake --build "$build" -j16 --target hetccl-cuda gpu_runtime_test coll_check_gpu stream_semantics fp8_nccl_rule coll_check \
    graph_check mismatch_check_gpu hetccl-run "${keep_going[@]}" 2>&1 | tee "$logs/build.log" || echo "run_on_device: BUILD FAILED (see build.log)"
fi

status=0
export HETCCL_CUDA_PLUGIN="$build/libhetccl-cuda.so"
# shellcheck disable=SC2086
HETCCL_TEST_REQUIRE_GPU=1 ctest --test-dir "$build" -L gpu --output-on-failure \
  --timeout "${HETCCL_CTEST_TIMEOUT:-120}" ${HETCCL_CTEST_ARGS:-} \
  --output-junit "$logs/ctest-gpu.xml" 2>&1 | tee "$logs/ctest-gpu.log" || status=$?
cp "$build/Testing/Temporary/LastTest.log" "$logs/" 2>/dev/null || true

# Which flag method the device uses, and the plugin's own log lines.
HETCCL_DEBUG=INFO HETCCL_CUDA_PLUGIN="$build/libhetccl-cuda.so" timeout 60 "$build/tests/gpu/gpu_runtime_test" \
  --gtest_filter='GpuMemoryTest.PointerQuery*:Methods/GpuFlagTest.Stream*' >"$logs/plugin-info.log" 2>&1 || true

echo "gpu tests exit status: $status (logs in $logs)"
exit "$status"
