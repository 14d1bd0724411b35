#!/usr/bin/env bash
# bench/run_algo_sweep.py --write-tuning writes a table the library takes: a tiny sweep (2 ranks in 2
# domains over shm, 1 - 64 KiB, one run of 5 calls per algorithm: the times are noise, only the format
# is checked) writes its layout's rows into a table that already holds another layout's row; the other row
# is kept, a second sweep replaces (not appends) the layout's rows, and hetccl-perf runs with the table
# (its results checked: a table it could not take would fail the run). Cost: about 1 s on 2 cores.
# Usage: test_sweep_writes_table.sh SOURCE_DIR BUILD_DIR
set -u
SRC=${1:?usage: test_sweep_writes_table.sh SOURCE_DIR BUILD_DIR}
BUILD=${2:?usage: test_sweep_writes_table.sh SOURCE_DIR BUILD_DIR}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
T=$WORK/machine.tuning
printf '# kept\nall_reduce 4 2 1 shm max tree\n' >"$T"
sweep() {  # sweep ARGS...: a hetccl-perf run that failed fails the test; "auto loses" (exit 1) is noise here
  python3 "$SRC/bench/run_algo_sweep.py" --build "$BUILD" -n 2 --domains 2 --transport shm --reps 1 --iters 5 \
    --warmup 1 -b 1K -e 64K -f 4 "$@" >"$WORK/sweep.out" 2>&1
  local rc=$?
  if [ "$rc" -gt 1 ] || grep -q "failed (exit" "$WORK/sweep.out"; then
    cat "$WORK/sweep.out"
    echo "FAIL: run_algo_sweep.py exit status $rc"
    exit 1
  fi
}
for round in 1 2; do
  sweep --algos auto,ring,rd,hier --write-tuning "$T"
done
cat "$T"
grep -q '^all_reduce 4 2 1 shm max tree$' "$T" || { echo "FAIL: the other layout's row was not kept"; exit 1; }
rows=$(grep -c '^all_reduce 2 2 1 shm ' "$T")
[ "$rows" -ge 1 ] || { echo "FAIL: no row for 2 ranks in 2 domains"; exit 1; }
[ "$(grep -c '^# 2 ranks in 2 domain' "$T")" = 1 ] || { echo "FAIL: the second sweep appended instead of replacing"; exit 1; }
grep '^all_reduce 2 2 1 shm ' "$T" | tail -1 | grep -Eq ' 65536 (ring|rd|hier)$' || { echo "FAIL: the last band does not end at 64 KiB"; exit 1; }
sweep --algos auto --variant "table:HETCCL_TUNING_FILE=$T,HETCCL_DEBUG=INFO"
cat "$WORK/sweep.out"
grep -q '| 65536 |' "$WORK/sweep.out" || { echo "FAIL: no result with the table"; exit 1; }
echo "ok: the sweep's table is kept, replaced and taken"
