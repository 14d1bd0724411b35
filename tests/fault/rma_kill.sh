#!/usr/bin/env bash
# SIGKILL the target of RMA puts: rank 0's request and notification wait must fail naming it
# (fault_rma_kill prints OK). Usage: rma_kill.sh BUILD_DIR NRANKS [hetccl-run args...]
set -u
build=$1 nranks=$2
shift 2
stamp=$(mktemp)
out=$(mktemp)
trap 'rm -f "$stamp" "$out"' EXIT
timeout 120 "$build/tools/hetccl-run" -n "$nranks" "$@" --grace 20 -- "$build/tests/fault/fault_rma_kill" "$stamp" >"$out" 2>&1
status=$?
cat "$out"
if [[ $status -ne 137 ]]; then
  echo "FAIL: hetccl-run exited $status, expected 137 (the victim's SIGKILL)"
  exit 1
fi
oks=$(grep -c "fault_rma_kill: rank .*: OK" "$out")
if [[ $oks -ne $((nranks - 1)) ]]; then
  echo "FAIL: $oks of $((nranks - 1)) survivors reported the dead rank correctly"
  exit 1
fi
echo "PASS: every survivor named the dead RMA target (rank 0 within 10 s)"
