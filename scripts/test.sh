#!/usr/bin/env bash
# Builds hetccl and runs the whole test suite: the normal build, then an AddressSanitizer +
# UndefinedBehaviorSanitizer build of the same suite (host code; the CUDA plugin is compiled by the
# first build, whose GPU tests skip with a printed reason where there is no GPU). Usage: bash scripts/test.sh [--no-sanitizers]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

run_suite() {  # run_suite BUILD_DIR [cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 300
}

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETCCL_BUILD_TESTS=ON
if [[ "${1:-}" != "--no-sanitizers" ]]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DHETCCL_SANITIZE=address,undefined -DHETCCL_BUILD_CUDA=OFF
fi
