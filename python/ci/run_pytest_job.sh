#!/usr/bin/env bash
# Runs python/tests with pytest on every rank of a hetccl-run job (CPU ranks) inside the venv of make_venv.sh,
# against BUILD_DIR's libhetccl.so. Prints each rank's summary; fails when hetccl-run fails, when any rank
# reports a failed test or an error, or when a rank did not report at all.
# Usage: run_pytest_job.sh BUILD_DIR SOURCE_DIR NRANKS DOMAINS [--only FILE [--needs MODULE]] [pytest args...]
#   --only FILE     run python/tests/FILE only (default: the whole directory; other args go to pytest)
#   --needs MODULE  exit 77 (ctest's skip) when the venv's Python cannot import MODULE (e.g. torch)
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
n=$3
domains=$4
shift 4
only= needs=
while (($#)); do
  case $1 in
    --only) only=$2; shift 2 ;;
    --needs) needs=$2; shift 2 ;;
    *) break ;;
  esac
done
targets=("$src/python/tests")
summary=$build/python-pytest-summary
if [[ -n $only ]]; then
  targets=("$src/python/tests/$only")
  summary=$build/python-pytest-summary-${only%.py}-${n}ranks  # its own: ctest -j runs these side by side
fi
if [[ -n $needs ]] && ! "$build/python-venv/bin/python" -c "import $needs" 2>/dev/null; then
  echo "=== skipped: $build/python-venv/bin/python cannot import $needs"
  exit 77
fi
rm -rf "$summary"
mkdir -p "$summary"
export HETCCL_LIBRARY=$build/libhetccl.so HETCCL_PYTEST_SUMMARY_DIR=$summary
export HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-60} PYTHONDONTWRITEBYTECODE=1
start=$SECONDS
cd "$src"
"$build/tools/hetccl-run" -n "$n" --domains "$domains" -p --timeout 600 -- \
  "$build/python-venv/bin/python" -m pytest -q -p no:cacheprovider -rs "$@" "${targets[@]}"
rc=$?
echo "=== pytest ${only:-python/tests} on $n ranks ($domains domains): hetccl-run exit status $rc, $((SECONDS - start)) s"
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
