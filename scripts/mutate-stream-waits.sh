#!/usr/bin/env bash
# Mutation check of the stream pipeline's waits: every wait in src/stream_exec/stream_program.cc carries
# a trailing marker comment `// wait:<name>` (a statement that calls `.streamWaitFlag(` or
# `.streamWaitEvent(` and ends on the marked line). For each marker in turn this removes that one wait (the statement becomes
# `(void)0;`), rebuilds unit_stream_exec and runs it against the adversarial simulated GPU; at least one
# test must fail (a stall counts when the run's time bound turns it into a failure). Prints a table
# wait -> caught/MISSED and exits non-zero if any wait's removal went unnoticed, if the unmutated tree
# fails, or if a build fails.
#
# The working tree is never modified: the script copies it (tracked and untracked, not ignored files) to
# build-mutate/tree and builds in build-mutate/build (kept between runs, so rebuilds are incremental;
# ccache helps the first one). Logs: build-mutate/logs/<name>.log; each mutant's test binary stays in
# build-mutate/mutants/unit_stream_exec.<name> (rerun one with HETCCL_SIM_SEED=<seed from its log>).
#
# Usage: bash scripts/mutate-stream-waits.sh [--runs N] [--only NAME[,NAME...]]
#   --runs N   run the tests up to N times per mutation (a new scheduler seed each time) until one
#              fails (default 3); the unmutated tree runs once
#   MUTATE_RUN_SECONDS (default 180): the time bound of one test run
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=3
only=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --only) only=${2:?--only needs names}; shift 2 ;;
    *) echo "usage: bash scripts/mutate-stream-waits.sh [--runs N] [--only NAME,...]" >&2; exit 2 ;;
  esac
done
bound=${MUTATE_RUN_SECONDS:-180}
program=src/stream_exec/stream_program.cc
work=$root/build-mutate
tree=$work/tree
build=$work/build
logs=$work/logs
start=$SECONDS

child=
on_signal() {
  [[ -n $child ]] && kill -- "$child" 2>/dev/null
  echo "interrupted (the working tree was never modified; scratch copy in $work)" >&2
  exit 130
}
trap on_signal INT TERM

# A fresh copy of the tree, keeping the build directory (mtimes are preserved, so only what changed rebuilds).
mkdir -p "$tree" "$logs" "$work/mutants"
rm -rf "$tree"/*
git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$tree"
cp "$root/$program" "$work/pristine.cc"

mapfile -t names < <(grep -o '// wait:[A-Za-z0-9_-]*' "$program" | sed 's|// wait:||')
[[ ${#names[@]} -gt 0 ]] || { echo "no '// wait:<name>' markers in $program" >&2; exit 1; }
if [[ -n $only ]]; then
  IFS=, read -r -a names <<<"$only"
fi

# mutate NAME: writes the pristine program with wait NAME removed into the scratch tree.
mutate() {
  awk -v name="$1" '
    { line[NR] = $0 }
    END {
      marker = "// wait:" name
      for (i = 1; i <= NR; ++i)
        if (substr(line[i], length(line[i]) - length(marker) + 1) == marker) m = i
      if (!m) { print "no marker " marker > "/dev/stderr"; exit 1 }
      s = m
      while (s > 0 && line[s] !~ /\.streamWait(Flag|Event)\(/) --s
      if (!s) { print "no streamWait call ends at " marker > "/dev/stderr"; exit 1 }
      match(line[s], /^ */)
      indent = substr(line[s], 1, RLENGTH)
      for (i = 1; i <= NR; ++i) {
        if (i == s) print indent "(void)0;  // wait " name " removed by scripts/mutate-stream-waits.sh"
        else if (i < s || i > m) print line[i]
      }
    }' "$work/pristine.cc" >"$tree/$program.new" || return 1
  mv "$tree/$program.new" "$tree/$program"
  touch "$tree/$program"  # newer than the last object, whichever version built it
}

rebuild() {  # rebuild LOG
  if [[ ! -f $build/build.ninja ]]; then
    cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETCCL_BUILD_TESTS=ON \
      -DHETCCL_BUILD_CUDA=OFF >>"$1" 2>&1
  fi
  cmake --build "$build" -j "$(nproc)" --target unit_stream_exec >>"$1" 2>&1
}

# run_tests LOG: 0 if every test passed in one run, 1 if a run failed or ran past its bound.
run_tests() {
  local i rc
  for ((i = 1; i <= $2; ++i)); do
    echo "--- run $i" >>"$1"
    rc=0
    timeout -k 10 "$bound" "$build/tests/unit_stream_exec" >>"$1" 2>&1 &
    child=$!
    wait "$child" || rc=$?
    child=
    echo "--- run $i exit status $rc" >>"$1"
    if [[ $rc != 0 ]]; then
      [[ $rc == 124 || $rc == 137 ]] && echo "--- run $i stalled past ${bound} s" >>"$1"
      return 1
    fi
  done
  return 0
}

# How a failing run failed: the failed tests' names, or a stall.
failure_of() {
  local failed rc
  failed=$(grep -o '^\[  FAILED  \] [A-Za-z0-9_]*\.[A-Za-z0-9_/]*' "$1" | sed 's/^\[  FAILED  \] //' | sort -u | paste -sd, -)
  rc=$(grep -o 'exit status [0-9]*' "$1" | tail -1 | awk '{print $3}')
  if grep -q 'stalled past' "$1"; then
    echo "stall (run bound ${bound} s)"
  elif [[ ${rc:-0} -gt 128 ]]; then
    echo "${failed:+$failed, then }crash (exit status $rc)"
  else
    echo "${failed:-exit status $rc}"
  fi
}

echo "=== unmutated tree (must pass)"
cp -p "$work/pristine.cc" "$tree/$program" && touch "$tree/$program"
rebuild "$logs/unmutated.log" || { echo "build failed: $logs/unmutated.log" >&2; exit 1; }
if ! run_tests "$logs/unmutated.log" 1; then
  echo "the unmutated tree fails: $(failure_of "$logs/unmutated.log") (log $logs/unmutated.log)" >&2
  exit 1
fi

rows=() missed=0
for name in "${names[@]}"; do
  log=$logs/$name.log
  : >"$log"
  echo "=== removing wait:$name"
  mutate "$name" 2>>"$log" || { echo "cannot remove wait:$name (see $log)" >&2; exit 1; }
  rebuild "$log" || { echo "build with wait:$name removed failed: $log" >&2; exit 1; }
  cp "$build/tests/unit_stream_exec" "$work/mutants/unit_stream_exec.$name"
  t0=$SECONDS
  if run_tests "$log" "$runs"; then
    rows+=("$(printf '%-24s %-7s %s' "$name" MISSED "all tests passed $runs time(s)")")
    missed=$((missed + 1))
  else
    seed=$(grep -o 'scheduler seed [0-9]*' "$log" | tail -1 | awk '{print $3}')
    rows+=("$(printf '%-24s %-7s %s' "$name" caught "$(failure_of "$log") [seed $seed, $((SECONDS - t0)) s]")")
  fi
done
cp -p "$work/pristine.cc" "$tree/$program" && touch "$tree/$program"

echo "=== stream wait mutations ($((SECONDS - start)) s):"
printf '%-24s %-7s %s\n' wait result "failing tests"
printf '%s\n' "${rows[@]}"
if [[ $missed -gt 0 ]]; then
  echo "$missed wait(s) removed without any test failing" >&2
  exit 1
fi
