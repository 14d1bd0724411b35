#!/usr/bin/env bash
# agent_device_check (agents on HIP device memory) on the fake HIP runtime. Usage: agent_device.sh BUILD window|tcp|ucx|ipc
# (window, tcp and ucx with HETCCL_AGENT_IPC=off: the paths device memory takes without IPC; ucx: the two
# processes on two "hosts", HETCCL_UCX=on, UCX_TLS=tcp, exit 77 without libucp.so.0, and the log must show
# both ends' payload set up over ucx and no connection over tcp)
set -euo pipefail
build=$(cd "$1" && pwd)
FAKE_ROCM_NEEDS="$build/tests/fake_hip/agent_device_check" source "$(dirname "$0")/fake_rocm_env.sh"
export HETCCL_DEVICE=hip HETCCL_RMA_WINDOW_SLOTS=2 HETCCL_RMA_WINDOW_BYTES=64K
export AGENT_CHECK_PATH=$2 HETCCL_AGENT_IPC=off
[[ $2 == tcp ]] && export HETCCL_AGENT_WINDOW=off
[[ $2 == ipc ]] && export HETCCL_AGENT_IPC=auto
if [[ $2 != ucx ]]; then exec "$build/tests/fake_hip/agent_device_check"; fi
bash "$(dirname "$0")/../mp/ucx_or_skip.sh" true || exit 77  # prints why
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
HETCCL_UCX=on UCX_TLS=tcp HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=NET "$build/tests/fake_hip/agent_device_check" >"$log" 2>&1 || rc=$?
cat "$log"
[[ $rc == 0 ]] || exit $rc
set_up=$(grep -c "payload with .* over ucx\$" "$log" || true)
if grep -q "connected to agent.*over tcp" "$log" || [[ $set_up -lt 2 ]]; then
  echo "FAIL: the payload did not cross ucx ($set_up set-up line(s))"
  exit 1
fi
echo "ucx path: $set_up set-up line(s), no connection over tcp"
