#!/usr/bin/env bash
# SIGKILL one rank during a large all-reduce: every survivor must report it (fault_kill prints OK).
# Usage: kill_during_allreduce.sh BUILD_DIR NRANKS [hetccl-run layout args...]
set -u
build=$1 nranks=$2
shift 2
stamp=$(mktemp)
out=$(mktemp)
trap 'rm -f "$stamp" "$out"' EXIT
timeout 120 "$build/tools/hetccl-run" -n "$nranks" "$@" --grace 20 -- "$build/tests/fault/fault_kill" "$stamp" >"$out" 2>&1
status=$?
cat "$out"
oks=$(grep -c "fault_kill: rank .*: OK" "$out")
if [[ $status -ne 137 ]]; then
  echo "FAIL: hetccl-run exited $status, expected 137 (the victim's SIGKILL)"
  exit 1
fi
if [[ $oks -ne $((nranks - 1)) ]]; then
  echo "FAIL: $oks of $((nranks - 1)) survivors reported the dead rank correctly"
  exit 1
fi
leftover=$(ls /dev/shm 2>/dev/null | grep -c '^hetccl' || true)
echo "PASS: all $oks survivors named the dead rank within 10 s; hetccl shm segments left: $leftover"
