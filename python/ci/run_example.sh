#!/usr/bin/env bash
# Runs an example under hetccl-run in the venv of make_venv.sh, against BUILD_DIR's libhetccl.so.
# Exit 77 (skipped) when it needs the RMA API and the library does not export it.
# Usage: run_example.sh BUILD_DIR SOURCE_DIR [--expect-failure REGEX] HETCCL-RUN-ARGS -- EXAMPLE ARGS...
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
shift 2
expect=""
if [[ ${1:-} == --expect-failure ]]; then expect=$2; shift 2; fi
run_args=()
while [[ $# -gt 0 && $1 != -- ]]; do run_args+=("$1"); shift; done
shift
example=$1
shift
export HETCCL_LIBRARY=$build/libhetccl.so HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-60} PYTHONDONTWRITEBYTECODE=1
py=$build/python-venv/bin/python
if grep -q rma_init "$src/examples/$example" && ! "$py" -c 'import hetccl, sys; sys.exit(0 if hetccl.rma_available() else 1)'; then
  echo "SKIPPED: $example needs the RMA API (hetccl_rma.h) and $HETCCL_LIBRARY does not export it yet"
  exit 77
fi
cd "$src"
if [[ -z $expect ]]; then
  exec "$build/tools/hetccl-run" "${run_args[@]}" -p --timeout 300 -- "$py" "examples/$example" "$@"
fi
# the example must fail, saying what was wrong (its check works)
out=$(HETCCL_TIMEOUT=10 "$build/tools/hetccl-run" "${run_args[@]}" -p --grace 5 --timeout 120 -- "$py" "examples/$example" "$@" 2>&1)
rc=$?
echo "$out"
[[ $rc != 0 ]] || { echo "expected $example to fail (corrupted data), it exited 0"; exit 1; }
grep -Eq "$expect" <<<"$out" || { echo "expected a line matching '$expect'"; exit 1; }
echo "ok: $example failed as expected (exit status $rc) with a line matching '$expect'"
