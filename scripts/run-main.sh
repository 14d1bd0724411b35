#!/usr/bin/env bash
# Builds hetccl and runs the main job on this machine: 4 CPU ranks in 2 domains, an all-reduce sweep
# checked exactly (nccl-tests columns). Extra arguments go to hetccl-perf.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETCCL_BUILD_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc)" --target hetccl-run hetccl-perf hetccl-info
exec build/tools/hetccl-run -n 4 --domains 2 -- build/tools/hetccl-perf all_reduce -b 8 -e 64M -f 4 -c 1 "$@"
