#!/usr/bin/env bash
# agent_device_check (agents on HIP device memory) on the fake HIP runtime. Usage: agent_device.sh BUILD window|tcp|ipc
# (window and tcp with HETCCL_AGENT_IPC=off: the paths device memory takes without IPC)
set -euo pipefail
build=$(cd "$1" && pwd)
FAKE_ROCM_NEEDS="$build/tests/fake_hip/agent_device_check" source "$(dirname "$0")/fake_rocm_env.sh"
export HETCCL_DEVICE=hip HETCCL_RMA_WINDOW_SLOTS=2 HETCCL_RMA_WINDOW_BYTES=64K
export AGENT_CHECK_PATH=$2 HETCCL_AGENT_IPC=off
[[ $2 == tcp ]] && export HETCCL_AGENT_WINDOW=off
[[ $2 == ipc ]] && export HETCCL_AGENT_IPC=auto
exec "$build/tests/fake_hip/agent_device_check"
