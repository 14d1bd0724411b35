#!/usr/bin/env bash
# Runs python/tests with pytest on every rank of a hetccl-run job (CPU ranks) inside the venv of make_venv.sh,
# against BUILD_DIR's libhetccl.so. Prints each rank's summary; fails when hetccl-run fails, when any rank
# reports a failed test or an error, or when a rank did not report at all.
# Usage: run_pytest_job.sh BUILD_DIR SOURCE_DIR NRANKS DOMAINS [pytest args...]
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
n=$3
domains=$4
shift 4
summary=$build/python-pytest-summary
rm -rf "$summary"
mkdir -p "$summary"
export HETCCL_LIBRARY=$build/libhetccl.so HETCCL_PYTEST_SUMMARY_DIR=$summary
export HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-60} PYTHONDONTWRITEBYTECODE=1
start=$SECONDS
cd "$src"
"$build/tools/hetccl-run" -n "$n" --domains "$domains" -p --timeout 600 -- \
  "$build/python-venv/bin/python" -m pytest -q -p no:cacheprovider -rs "$@" "$src/python/tests"
rc=$?
echo "=== pytest on $n ranks ($domains domains): hetccl-run exit status $rc, $((SECONDS - start)) s"
"$build/python-venv/bin/python" - "$summary" "$n" "$rc" <<'PY'
import json, os, sys
d, n, rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = rc != 0
for r in range(n):
    p = os.path.join(d, f"rank{r}.json")
    if not os.path.exists(p):
        print(f"  rank {r}: NO SUMMARY (the rank died before pytest finished)")
        bad = True
        continue
    s = json.load(open(p))
    print(f"  rank {r}: passed {s['passed']}, failed {s['failed']}, errors {s['error']}, skipped {s['skipped']}")
    bad |= s["failed"] > 0 or s["error"] > 0 or s["exit"] != 0 or s["passed"] == 0
print("=== python tests " + ("FAILED" if bad else "passed on every rank"))
sys.exit(1 if bad else 0)
PY
