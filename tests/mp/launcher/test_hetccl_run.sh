#!/usr/bin/env bash
# Tests of hetccl-run as a user sees it: per-rank variables, output, exit codes, failure handling.
# Usage: test_hetccl_run.sh BUILD_DIR   (runs BUILD_DIR/tools/hetccl-run; exits non-zero on failure)
# No timing assertions: every run is bounded by `timeout` so that a hang fails instead of blocking.
set -u

BUILD_DIR=${1:?usage: test_hetccl_run.sh BUILD_DIR}
RUN="$BUILD_DIR/tools/hetccl-run"
[ -x "$RUN" ] || { echo "FAIL: $RUN is not an executable" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1" >&2; }

# run NAME ARGS...: runs hetccl-run (bounded), leaving $WORK/NAME.out, $WORK/NAME.err and $rc.
run() {
  local name=$1
  shift
  timeout 120 "$RUN" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
}

# expect_rc NAME WANT: checks the last run's exit status.
expect_rc() {
  if [ "$rc" -eq "$2" ]; then pass "$1: exit status $2"
  else fail "$1: exit status $rc, expected $2; stderr: $(cat "$WORK/$1.err")"; fi
}

# expect_sorted_out NAME EXPECTED: the run's stdout lines, sorted, must equal EXPECTED.
expect_sorted_out() {
  local got
  got=$(sort "$WORK/$1.out")
  if [ "$got" = "$2" ]; then pass "$1: output"
  else fail "$1: output was [$got], expected [$2]"; fi
}

# expect_err NAME PATTERN: stderr must contain PATTERN (grep -E).
expect_err() {
  if grep -qE -- "$2" "$WORK/$1.err"; then pass "$1: stderr has '$2'"
  else fail "$1: stderr lacks '$2': $(cat "$WORK/$1.err")"; fi
}

# expect_all_dead NAME: every pid listed in $WORK/NAME.pids.* is gone.
expect_all_dead() {
  local f alive=""
  for f in "$WORK/$1".pids.*; do
    [ -e "$f" ] || continue
    if kill -0 "$(cat "$f")" 2>/dev/null; then alive="$alive $(cat "$f")"; fi
  done
  if [ -z "$alive" ]; then pass "$1: no rank left running"
  else fail "$1: still running:$alive"; fi
}

# --- variables per rank ---------------------------------------------------------------------------
run env_rr -n 4 --domains 2 -- sh -c 'echo $HETCCL_RANK $HETCCL_DOMAIN'
expect_rc env_rr 0
expect_sorted_out env_rr "$(printf '0 d0\n1 d1\n2 d0\n3 d1')"

run env_blocks -n 5 --domains 2 --layout blocks -- sh -c 'echo $HETCCL_RANK $HETCCL_DOMAIN'
expect_sorted_out env_blocks "$(printf '0 d0\n1 d0\n2 d0\n3 d1\n4 d1')"

run env_sizes -n 5 --layout 2,1,2 -- sh -c 'echo $HETCCL_RANK $HETCCL_DOMAIN'
expect_sorted_out env_sizes "$(printf '0 d0\n1 d0\n2 d1\n3 d2\n4 d2')"

run env_numbers -n 3 --host-ids 2 -- sh -c \
  'echo $HETCCL_RANK $HETCCL_NRANKS $HETCCL_LOCAL_RANK $HETCCL_LOCAL_SIZE $HETCCL_HOST_ID ${#HETCCL_UNIQUE_ID}'
expect_sorted_out env_numbers "$(printf '0 3 0 3 h0 256\n1 3 1 3 h1 256\n2 3 2 3 h0 256')"

run env_same_id -n 3 -- sh -c 'echo $HETCCL_UNIQUE_ID'
if [ "$(sort -u "$WORK/env_same_id.out" | wc -l)" -eq 1 ] && [ "$(wc -l <"$WORK/env_same_id.out")" -eq 3 ]; then
  pass "env_same_id: every rank got the same unique id"
else fail "env_same_id: ids differ: $(cat "$WORK/env_same_id.out")"; fi

HETCCL_DOMAIN=mine HETCCL_HOST_ID=box run env_untouched -n 2 --domains 0 --host-ids 0 -- \
  sh -c 'echo $HETCCL_RANK $HETCCL_DOMAIN $HETCCL_HOST_ID'
expect_sorted_out env_untouched "$(printf '0 mine box\n1 mine box')"

# --- output ---------------------------------------------------------------------------------------
run prefix -n 2 -p -- sh -c 'echo out$HETCCL_RANK; echo err$HETCCL_RANK >&2; printf tail$HETCCL_RANK'
expect_sorted_out prefix "$(printf '[0] out0\n[0] tail0\n[1] out1\n[1] tail1')"
expect_err prefix '^\[1\] err1$'

# --- exit codes -----------------------------------------------------------------------------------
run all_ok -n 3 -- true
expect_rc all_ok 0

run one_fails -n 3 -- sh -c '[ $HETCCL_RANK = 2 ] && exit 3; exit 0'
expect_rc one_fails 3
expect_err one_fails 'rank 2 \(pid [0-9]+\) exited with status 3'
expect_err one_fails 'rank 0 \(pid [0-9]+\): exited with status 0'

run no_such_command -n 2 -- /nonexistent/program
expect_rc no_such_command 127
expect_err no_such_command 'cannot execute'

run bad_usage -n 2 --layout 1,2 -- true
expect_rc bad_usage 2
expect_err bad_usage 'sum to 3'

# --- a killed rank: reported, the others terminated after the grace period -------------------------
run killed -n 3 --grace 1 -- sh -c \
  'echo $$ > '"$WORK"'/killed.pids.$HETCCL_RANK; [ $HETCCL_RANK = 1 ] && kill -9 $$; exec sleep 100'
expect_rc killed 137
expect_err killed 'rank 1 \(pid [0-9]+\) killed by signal 9'
expect_err killed 'rank 0 \(pid [0-9]+\): killed by signal 15'
expect_err killed 'rank 2 \(pid [0-9]+\): killed by signal 15'
expect_all_dead killed

# Ranks that ignore SIGTERM get SIGKILL. Rank 0 fails once ranks 1 and 2 ignore SIGTERM (bounded wait).
run stubborn -n 3 --grace 0 -- sh -c '
  if [ $HETCCL_RANK = 0 ]; then
    for i in $(seq 1 600); do [ -e "$0.1" ] && [ -e "$0.2" ] && break; sleep 0.1; done
    exit 5
  fi
  trap "" TERM; echo $$ > "$0.tmp$HETCCL_RANK"; mv "$0.tmp$HETCCL_RANK" "$0.$HETCCL_RANK"; exec sleep 100' \
  "$WORK/stubborn.pids"
expect_rc stubborn 5
expect_err stubborn 'rank 1 \(pid [0-9]+\): killed by signal 9'
expect_all_dead stubborn

# --- timeout --------------------------------------------------------------------------------------
run timed_out -n 2 --timeout 1 -- sleep 100
expect_rc timed_out 124
expect_err timed_out 'timeout of 1 s reached'

# --- SIGTERM to hetccl-run is forwarded ------------------------------------------------------------
mkdir "$WORK/ready"
timeout 120 "$RUN" -n 2 -- sh -c \
  'echo $$ > '"$WORK"'/forward.pids.$HETCCL_RANK; touch '"$WORK"'/ready/$HETCCL_RANK; exec sleep 100' \
  >"$WORK/forward.out" 2>"$WORK/forward.err" &
launcher=$!
for _ in $(seq 1 600); do  # until both ranks started (bounded: 60 s)
  [ -e "$WORK/ready/0" ] && [ -e "$WORK/ready/1" ] && break
  sleep 0.1
done
kill -TERM "$launcher"
wait "$launcher"
rc=$?
expect_rc forward 143
expect_err forward 'forwarding it to the ranks'
expect_all_dead forward

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
