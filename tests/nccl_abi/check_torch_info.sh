#!/usr/bin/env bash
# check_torch_info.sh HETCCL_INFO PATH WANT_RC PATTERN... : `hetccl-info --torch PATH` exits WANT_RC and
# every PATTERN (grep -E) matches a line of its output.
set -uo pipefail
out=$("$1" --torch "$2" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq $3 ]] || { echo "FAIL: exit status $rc, expected $3"; exit 1; }
for pattern in "${@:4}"; do
  grep -Eq "$pattern" <<<"$out" || { echo "FAIL: output does not match '$pattern'"; exit 1; }
done
echo "OK"
