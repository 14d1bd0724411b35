#!/usr/bin/env bash
# agent_device_check (agents on HIP device memory) on the fake HIP runtime. Usage: agent_device.sh BUILD window|tcp
set -euo pipefail
build=$(cd "$1" && pwd)
fake="$build/tests/fake_hip/libhetccl-fakehip.so"
[[ -e $build/libhetccl-hip.so && -e $fake ]] || { echo "no HIP plugin or fake runtime in $build: skipped"; exit 77; }
mkdir -p "$build/fake_rocm"
ln -sfn "$fake" "$build/fake_rocm/libamdhip64.so.7"
export LD_LIBRARY_PATH="$build/fake_rocm${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HETCCL_HIP_PLUGIN="$build/libhetccl-hip.so" HETCCL_HIPRTC_LIB="$build/fake_rocm/libamdhip64.so.7"
export HETCCL_DEVICE=hip HETCCL_RMA_WINDOW_SLOTS=2 HETCCL_RMA_WINDOW_BYTES=64K
[[ $2 == tcp ]] && export HETCCL_AGENT_WINDOW=off
exec "$build/tests/fake_hip/agent_device_check"
