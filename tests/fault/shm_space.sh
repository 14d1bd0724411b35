#!/usr/bin/env bash
# /dev/shm in a private mount namespace (unshare -m, a fresh tmpfs on /dev/shm), so that its contents
# are this test's alone:
#   small     4 ranks over shm with a 16 MiB /dev/shm and a 4 MiB all-reduce that fills the rings (they
#             need ~48 MiB): every rank must fail init with an error (no signal: SIGBUS was the old
#             behaviour), one naming /dev/shm and how much it needs; nothing may be left in /dev/shm.
#   bad-env   2 ranks with HETCCL_CHECKSUM=abc (init fails after rings exist): nothing left in /dev/shm.
# Skips (exit 77) where a mount namespace cannot be made (not root, no unshare).
# Usage: shm_space.sh BUILD_DIR small|bad-env
set -u
build=$1
mode=$2
if [[ ${HETCCL_IN_PRIVATE_SHM:-} != 1 ]]; then
  if ! unshare -m true 2>/dev/null; then
    echo "SKIP: cannot create a mount namespace here (unshare -m needs root / CAP_SYS_ADMIN)"
    exit 77
  fi
  size=64M
  [[ $mode == small ]] && size=16M
  exec unshare -m bash -c "mount -t tmpfs -o size=$size tmpfs /dev/shm && HETCCL_IN_PRIVATE_SHM=1 exec bash '$0' '$build' '$mode'"
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
export HETCCL_TRANSPORT=shm HETCCL_TIMEOUT=30
case $mode in
  small) nranks=4 ;;
  bad-env) nranks=2; export HETCCL_CHECKSUM=abc ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
timeout 120 "$build/tools/hetccl-run" -n $nranks -- "$build/tools/hetccl-perf" all_reduce -b 4M -e 4M -n 1 -w 0 \
  >"$out" 2>&1
status=$?
cat "$out"
left=$(ls -A /dev/shm)
fail=0
if [[ $status == 0 ]]; then echo "FAIL: the job succeeded; it should have failed init"; fail=1; fi
if grep -qiE 'signal|bus error|core dumped' "$out"; then echo "FAIL: a rank died of a signal"; fail=1; fi
exited=$(grep -cE '^  rank [0-9]+ \(pid [0-9]+\): exited with status [1-9]' "$out")
if [[ $exited != "$nranks" ]]; then echo "FAIL: $exited of $nranks ranks exited with an error status"; fail=1; fi
if [[ $mode == small ]] && ! grep -q 'cannot reserve .* of shared memory .* in /dev/shm .* n\*(n-1) rings' "$out"; then
  echo "FAIL: no rank said how much /dev/shm the job needs"
  fail=1
fi
if [[ $mode == bad-env ]] && ! grep -q "HETCCL_CHECKSUM" "$out"; then echo "FAIL: no error names HETCCL_CHECKSUM"; fail=1; fi
if [[ -n $left ]]; then echo "FAIL: left in /dev/shm: $left"; fail=1; fi
[[ $fail == 0 ]] && echo "PASS ($mode)"
exit $fail
