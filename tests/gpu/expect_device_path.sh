#!/usr/bin/env bash
# A GPU test that must also run on a given device path: runs COMMAND (a hetccl-run line) with
# HETCCL_DEBUG=INFO and fails when it passed but no rank logged "device calls: ...TEXT..." (the path
# selector's line), so a layout that silently falls back to another path fails the test.
# Usage: expect_device_path.sh [--min-gpus N] TEXT COMMAND...
#   --min-gpus N: exit 77 (ctest: skipped; a failure under HETCCL_TEST_REQUIRE_GPU=1) with fewer CUDA
#   devices, since the layout would put two ranks of one domain on one GPU and take another path.
set -u -o pipefail
min_gpus=1
if [[ ${1:-} == --min-gpus ]]; then min_gpus=$2; shift 2; fi
text=${1:?usage: expect_device_path.sh [--min-gpus N] TEXT COMMAND...}
shift
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ $gpus -lt $min_gpus ]]; then
  if [[ ${HETCCL_TEST_REQUIRE_GPU:-0} == 1 ]]; then
    echo "expect_device_path: FAILED: HETCCL_TEST_REQUIRE_GPU=1 but $gpus CUDA device(s), this test needs $min_gpus" >&2
    exit 1
  fi
  echo "expect_device_path: SKIPPED: $gpus CUDA device(s), this test needs $min_gpus"
  exit 77
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
HETCCL_DEBUG=INFO "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
[[ $status == 0 ]] || exit "$status"
if ! grep -F "device calls: " "$log" | grep -qF -- "$text"; then
  echo "expect_device_path: FAILED: the command passed, but no rank logged 'device calls: ...$text...'; it logged:" >&2
  grep -F "device calls: " "$log" | head -4 >&2
  exit 1
fi
echo "expect_device_path: every check passed on the expected path ('$text')"
