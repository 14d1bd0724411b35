#!/usr/bin/env bash
# HETCCL_TUNING_FILE end to end (algo/tuning_table.hpp): 3 ranks in 3 domains over shm.
#  1. a table with a band for each algorithm: coll_check's all-reduces (every type and op; 1-65537
#     elements, so every band is hit) are exact, and the INFO log shows the bands the ranks took;
#  2. rank 2 with another table: every rank fails at creation naming the variable, within seconds;
#  3. a malformed table on every rank: every rank fails naming the file and the line;
#  4. a table without rows for this layout changes nothing (no bands line in the log).
# Cost: about 2 s on 2 cores (four 3-rank jobs; the first checks 576 all-reduce cases: every type and op).
# Usage: test_tuning_file.sh BUILD_DIR COLL_CHECK
set -u
BUILD_DIR=${1:?usage: test_tuning_file.sh BUILD_DIR COLL_CHECK}
CHECK=${2:?usage: test_tuning_file.sh BUILD_DIR COLL_CHECK}
RUN="$BUILD_DIR/tools/hetccl-run"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0
ok() { echo "ok   $1"; }
fail() {
  failed=1
  echo "FAIL $1" >&2
}
# Each rank reads the table $WORK/<TABLE_OF_RANK_r, else TABLE>.tuning (hetccl-run sets HETCCL_RANK).
cat >"$WORK/per_rank.sh" <<'W'
#!/usr/bin/env bash
var=TABLE_OF_RANK_$HETCCL_RANK
export HETCCL_TUNING_FILE=$WORK/${!var:-$TABLE}.tuning
exec "$@"
W
# job NAME VAR=VALUE...: 3 ranks in 3 domains run coll_check's all-reduces; output in $WORK/NAME, status in $rc.
job() {
  local name=$1
  shift
  env WORK="$WORK" HETCCL_TRANSPORT=shm HETCCL_TIMEOUT=60 HETCCL_DEBUG=INFO "$@" timeout 120 "$RUN" -n 3 --domains 3 \
    --timeout 100 -- bash "$WORK/per_rank.sh" "$CHECK" --colls all_reduce --sizes 1,7,1000,65537 >"$WORK/$name" 2>&1
  rc=$?
}
expect() {  # expect NAME REGEX WHAT
  if grep -Eq -- "$2" "$WORK/$1"; then
    ok "$1: $3"
  else
    fail "$1: $3 (no /$2/)"
    tail -40 "$WORK/$1" >&2
  fi
}

cat >"$WORK/bands.tuning" <<'T'
# a band per algorithm for 3 one-rank domains on one host over shm
all_reduce 3 3 1 shm 64 tree
all_reduce 3 3 1 shm 4K rd
all_reduce 3 3 1 shm 64K hier
all_reduce 3 3 1 shm max ring
all_reduce 4 2 1 shm max tree   # another layout: ignored
T
job bands TABLE=bands
[ "$rc" = 0 ] && ok "bands: every all-reduce exact" || fail "bands: exit status $rc"
expect bands "rank 2: host all-reduces under auto from HETCCL_TUNING_FILE: tree<=64 rd<=4096 hier<=65536 ring" \
  "rank 2 took the bands"

sed 's/4K rd/4K tree/' "$WORK/bands.tuning" >"$WORK/other.tuning"
start=$SECONDS
job differ TABLE=bands TABLE_OF_RANK_2=other
[ "$rc" != 0 ] && ok "differ: the job fails" || fail "differ: the job passed"
[ $((SECONDS - start)) -lt 30 ] && ok "differ: within 30 s" || fail "differ: took $((SECONDS - start)) s"
for r in 0 1 2; do
  expect differ "rank $r.*HETCCL_TUNING_FILE \(rows for this layout\) differs between ranks: rank 0 has 'tree<=64 rd<=4096 hier<=65536 ring', rank 2 has 'tree<=64 tree<=4096" \
    "rank $r names the variable and both values"
done

printf 'all_reduce 3 3 1 shm 64 tree\nall_reduce 3 3 1 shm 32 rd\n' >"$WORK/bad.tuning"
job bad TABLE=bad
[ "$rc" != 0 ] && ok "bad: the job fails" || fail "bad: the job passed"
for r in 0 1 2; do
  expect bad "rank $r.*tuning file $WORK/bad.tuning, line 2: size 32 is not above this layout's previous row \(64\)" \
    "rank $r names the file and the line"
done

printf 'all_reduce 4 4 1 shm max tree\n' >"$WORK/elsewhere.tuning"
job elsewhere TABLE=elsewhere
[ "$rc" = 0 ] && ok "elsewhere: exact" || fail "elsewhere: exit status $rc"
if grep -q "from HETCCL_TUNING_FILE" "$WORK/elsewhere"; then fail "elsewhere: bands taken from another layout's rows"; else ok "elsewhere: no bands"; fi

exit $failed
