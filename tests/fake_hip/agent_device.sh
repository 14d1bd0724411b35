#!/usr/bin/env bash
# agent_device_check (agents on HIP device memory) on the fake HIP runtime. Usage: agent_device.sh BUILD window|tcp
set -euo pipefail
build=$(cd "$1" && pwd)
FAKE_ROCM_NEEDS="$build/tests/fake_hip/agent_device_check" source "$(dirname "$0")/fake_rocm_env.sh"
export HETCCL_DEVICE=hip HETCCL_RMA_WINDOW_SLOTS=2 HETCCL_RMA_WINDOW_BYTES=64K
[[ $2 == tcp ]] && export HETCCL_AGENT_WINDOW=off
exec "$build/tests/fake_hip/agent_device_check"
