#!/usr/bin/env bash
# Rank 0 runs the GPU check (domain "cuda"), every other rank the host check (domain "host", HETCCL_DEVICE=host):
# one communicator with GPU and CPU ranks. Usage: gpu_or_cpu_rank.sh GPU_PROGRAM HOST_PROGRAM
if ! nvidia-smi -L >/dev/null 2>&1; then
  if [[ ${HETCCL_TEST_REQUIRE_GPU:-0} == 1 ]]; then
    echo "gpu_or_cpu_rank: FAILED: HETCCL_TEST_REQUIRE_GPU=1 but no CUDA device" >&2
    exit 1
  fi
  echo "gpu_or_cpu_rank: SKIPPED: no CUDA device"
  exit 77
fi
if [[ "${HETCCL_RANK:-0}" == 0 ]]; then
  exec "$1"
fi
HETCCL_DEVICE=host exec "$2"
