#!/usr/bin/env bash
# The verdicts of coll_check, the soak and hetccl-perf do not come from the library under test: each
# rank's own count of wrong elements decides its exit status, and hetccl-run fails when any rank does.
# HETCCL_TEST_WRONG_RANK=1 makes rank 1 find one wrong element while contributing 0 to the all-reduced
# summary (so every printed summary says 0 wrong): the run must still fail, through rank 1's exit status.
# Each program also runs once without the injection and must pass (the failure is the injection's).
# Usage: test_wrong_rank.sh BUILD_DIR   (exits non-zero on failure; every run is bounded by `timeout`)
set -u

BUILD_DIR=${1:?usage: test_wrong_rank.sh BUILD_DIR}
RUN="$BUILD_DIR/tools/hetccl-run"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1" >&2; }

# run NAME PROGRAM ARGS...: three ranks in two domains; leaves $WORK/NAME.{out,err} and $rc.
run() {
  local name=$1
  shift
  timeout 200 "$RUN" -n 3 --domains 2 --timeout 180 -- "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
}

# expect NAME FILE REGEX WHAT: FILE (out or err) of run NAME matches REGEX.
expect() {
  if grep -Eq -- "$3" "$WORK/$1.$2"; then pass "$1: $4"
  else fail "$1: $4: no line matching '$3' in std$2:"; sed 's/^/    /' "$WORK/$1.out" "$WORK/$1.err" >&2; fi
}

# check NAME SUMMARY_REGEX PROGRAM ARGS...: the clean run passes; the injected run fails through rank 1's
# exit status while its summary (SUMMARY_REGEX, in stdout) says 0 wrong elements.
check() {
  local name=$1 summary=$2
  shift 2
  run "$name-clean" "$@"
  if [ "$rc" -eq 0 ]; then pass "$name-clean: exit status 0"
  else fail "$name-clean: exit status $rc"; sed 's/^/    /' "$WORK/$name-clean.err" >&2; fi
  HETCCL_TEST_WRONG_RANK=1 run "$name-wrong" "$@"
  if [ "$rc" -ne 0 ]; then pass "$name-wrong: exit status $rc (failed)"
  else fail "$name-wrong: exit status 0 although rank 1 found a wrong element"; fi
  expect "$name-wrong" err 'rank 1 \(pid [0-9]+\): exited with status 1' "rank 1's own exit status is 1"
  expect "$name-wrong" err 'rank 0 \(pid [0-9]+\): exited with status 0' "rank 0 (no wrong element) exits 0"
  expect "$name-wrong" out "$summary" "the all-reduced summary said 0 wrong elements"
}

check coll_check 'rank 1 of 3: .* 1 wrong elements on this rank \(0 over all ranks by all-reduce\)' \
  "$BUILD_DIR/tests/mp/coll_check" --sizes 7 --colls all_reduce --types int32 --ops sum
check soak 'rank 1 of 3: .* 1 wrong elements on this rank \(0 over all ranks by all-reduce\)' \
  "$BUILD_DIR/tests/soak/hetccl_soak" --seconds 2 --seed 3 --report-every 1 --max-count 1000
check hetccl-perf '^# Out of bounds values : 0 OK' \
  "$BUILD_DIR/tools/hetccl-perf" all_reduce -b 1K -e 4K -f 2 -n 2 -w 1 -d int32

echo "test_wrong_rank: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
