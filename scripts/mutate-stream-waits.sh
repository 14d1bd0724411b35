#!/usr/bin/env bash
# Mutation check of the stream pipeline's waits: every wait in src/exec/pipeline/stream_program.cc (the
# streams' waits), src/exec/pipeline/net_ring_proxy.cc (the ring proxy's, between hosts) and
# src/device/gpu/ll_protocol.cuh (the latency path's kernel, which the simulated GPU runs) carries
# a trailing marker comment `// wait:<name>` on the line where its statement starts (the statement ends
# at the first line, from there, whose code ends with `;`). For each marker in turn this removes that
# one statement (it becomes `(void)0;`, so an `if` or loop around it stays valid), builds unit_stream_exec with it and runs it against the adversarial
# simulated GPU; at least one test must fail (a stall counts when the run's time bound turns it into a
# failure). Prints a table wait -> caught/MISSED and exits non-zero if any wait's removal went
# unnoticed, if the unmutated build fails its tests, or if a build fails.
#
# The working tree is never modified (so an interrupted run leaves nothing behind): everything is
# written under build-mutate/. Two ways to build the mutants:
#   default       a copy of the tree (tracked and untracked, not ignored files) in build-mutate/tree, built
#                 in build-mutate/build (kept between runs: rebuilds are incremental; ccache helps the
#                 first one, a cold build is about 100 objects)
#   --build DIR   reuse DIR, an up-to-date Ninja build of this tree (scripts/test.sh passes its `build`):
#                 each mutant is the mutated source compiled with DIR's own command and linked
#                 ahead of DIR's libraries into a separate binary; DIR's files are not touched
# Logs: build-mutate/logs/<name>.log; each mutant's binary stays in build-mutate/mutants/ (rerun one with
# HETCCL_SIM_SEED=<seed from its log> to replay the scheduler's choices).
#
# Usage: bash scripts/mutate-stream-waits.sh [--build DIR] [--runs N] [--only NAME[,NAME...]]
#   (with --build, MUTATE_JOBS mutants at a time, default the machine's cores)
#   --runs N   run the tests up to N times per mutation (a new scheduler seed each time) until one
#              fails (default 3); the unmutated binary runs once
#   MUTATE_RUN_SECONDS (default 120): the time bound of one test run
# Each run stops at its first failing test (--gtest_fail_fast), so the table names that test; a stalled
# test fails at the tests' own HETCCL_TIMEOUT (30 s; for the mutants 5 s, MUTATE_STALL_SECONDS). The proxy's mutants run only the tests between hosts
# (*NetRing*: nothing else has a proxy), the latency path's only its tests (*LatencyPath*: the others turn it off). Which tests catch which wait, over many runs:
#   build-mutate/mutants/unit_stream_exec.<name> --gtest_filter=<test> --gtest_repeat=10
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=3
only=
reuse=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --only) only=${2:?--only needs names}; shift 2 ;;
    --build) reuse=$(cd "${2:?--build needs a directory}" && pwd); shift 2 ;;
    *) echo "usage: bash scripts/mutate-stream-waits.sh [--build DIR] [--runs N] [--only NAME,...]" >&2; exit 2 ;;
  esac
done
bound=${MUTATE_RUN_SECONDS:-120}
programs=(src/exec/pipeline/stream_program.cc src/exec/pipeline/net_ring_proxy.cc src/device/gpu/ll_protocol.cuh)
# A header program is compiled into the tests through this source (the simulated GPU, which runs the latency
# path's kernel through tests/support/ll_host_kernel.hpp).
declare -A unitOf=([src/device/gpu/ll_protocol.cuh]=tests/unit/stream_exec/sim_gpu.cc)
unit_of() { echo "${unitOf[$1]:-$1}"; }  # unit_of PROGRAM: the source file whose object holds it
work=$root/build-mutate
logs=$work/logs
mutants=$work/mutants
start=$SECONDS

child=
on_signal() {
  [[ -n $child ]] && kill -- "$child" 2>/dev/null
  local job
  for job in $(jobs -p); do pkill -P "$job" 2>/dev/null; kill "$job" 2>/dev/null; done
  echo "interrupted (the working tree was never modified; scratch files in $work)" >&2
  exit 130
}
trap on_signal INT TERM

mkdir -p "$logs" "$mutants" "$work/src" "$work/pristine"
declare -A fileOf  # wait name -> the program that holds it
names=()
for program in "${programs[@]}"; do
  cp "$root/$program" "$work/pristine/$(basename "$program")"
  while read -r name; do
    names+=("$name")
    fileOf[$name]=$program
  done < <(grep -o '// wait:[A-Za-z0-9_-]*' "$program" | sed 's|// wait:||')
done
[[ ${#names[@]} -gt 0 ]] || { echo "no '// wait:<name>' markers in ${programs[*]}" >&2; exit 1; }
if [[ -n $only ]]; then
  IFS=, read -r -a names <<<"$only"
fi
pristine() { echo "$work/pristine/$(basename "$1")"; }  # pristine PROGRAM: its saved copy

# mutant_source NAME OUT: writes NAME's program, pristine, with wait NAME removed to OUT.
mutant_source() {
  awk -v name="$1" '
    { line[NR] = $0 }
    END {
      marker = "// wait:" name
      for (i = 1; i <= NR; ++i)
        if (substr(line[i], length(line[i]) - length(marker) + 1) == marker) s = i
      if (!s) { print "no marker " marker > "/dev/stderr"; exit 1 }
      for (e = s; e <= NR; ++e) {  # the statement ends on the first line whose code ends with ";"
        code = line[e]
        sub(/[ \t]*\/\/.*$/, "", code)
        if (code ~ /;[ \t]*$/) break
      }
      if (e > NR) { print "no end of the statement marked " marker > "/dev/stderr"; exit 1 }
      match(line[s], /^ */)
      indent = substr(line[s], 1, RLENGTH)
      for (i = 1; i <= NR; ++i) {
        if (i == s) print indent "(void)0;  // wait " name " removed by scripts/mutate-stream-waits.sh"
        else if (i < s || i > e) print line[i]
      }
    }' "$(pristine "${fileOf[$1]}")" >"$2"
}

# --- default: a scratch copy of the tree and its own build ---------------------------------------------
scratch_prepare() {  # the copy (mtimes are preserved, so only what changed rebuilds)
  tree=$work/tree
  build=$work/build
  mkdir -p "$tree"
  rm -rf "${tree:?}"/*
  git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$tree"
}
scratch_build() {  # scratch_build PROGRAM SOURCE OUT LOG: builds unit_stream_exec with SOURCE as PROGRAM
  local program
  for program in "${programs[@]}"; do  # every other program pristine
    cp "$(pristine "$program")" "$tree/$program"
  done
  cp "$2" "$tree/$1"
  for program in "${programs[@]}"; do touch "$tree/$program"; done  # newer than the last objects
  if [[ ! -f $build/build.ninja ]]; then
    cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETCCL_BUILD_TESTS=ON \
      -DHETCCL_BUILD_CUDA=OFF >>"$4" 2>&1 || return 1
  fi
  cmake --build "$build" -j "$(nproc)" --target unit_stream_exec >>"$4" 2>&1 || return 1
  cp "$build/tests/unit_stream_exec" "$3"
}

# --- --build DIR: the mutated object linked ahead of DIR's libraries ------------------------------------
reuse_prepare() {
  [[ -f $reuse/build.ninja ]] || { echo "$reuse is not a Ninja build directory" >&2; exit 1; }
  cmake --build "$reuse" --target unit_stream_exec >"$logs/reuse-build.log" 2>&1 ||
    { echo "building unit_stream_exec in $reuse failed: $logs/reuse-build.log" >&2; exit 1; }
  declare -gA objectOf compileOf
  local program object
  for program in "${programs[@]}"; do
    unit=$(unit_of "$program")
    unit=${unit#tests/}  # the tests' objects are named from tests/
    object=$(ninja -C "$reuse" -t targets all | grep -o "^[^:]*/${unit//./\\.}\.o" | head -1)
    [[ -n $object ]] || { echo "no $program object in $reuse" >&2; exit 1; }
    objectOf[$program]=$object
    compileOf[$program]=$(ninja -C "$reuse" -t commands "$object" | tail -1)
    [[ ${compileOf[$program]} == *" -c "* ]] || { echo "unexpected build command for $object in $reuse" >&2; exit 1; }
  done
  link=$(ninja -C "$reuse" -t commands tests/unit_stream_exec | tail -1)
  link=${link#: && }
  link=${link%% && *}  # the link itself, without CMake's post-build test discovery
  [[ $link == *" -o tests/unit_stream_exec "* ]] || { echo "unexpected link command in $reuse" >&2; exit 1; }
}
reuse_build() {  # reuse_build PROGRAM SOURCE OUT LOG NAME (NAME keeps concurrent mutants' scratch files apart)
  local tag=${5:-unmutated}
  local obj=$work/src/mutant-$tag.o cmd hdr=$work/src/hdr-$tag
  # DIR's compile command of PROGRAM with the object (and its dependency file) and the source replaced; a
  # header program: its unit's command, the mutated header found first (an -I ahead of the others).
  cmd=${compileOf[$1]//"${objectOf[$1]}"/"$obj"}
  if [[ $(unit_of "$1") != "$1" ]]; then
    rm -rf "$hdr" && mkdir -p "$hdr/$(dirname "${1#src/}")" && cp "$2" "$hdr/${1#src/}"
    cmd="${cmd%% *} -I$hdr ${cmd#* }"
  else
    cmd="${cmd% -c *} -c $2"
  fi
  (cd "$reuse" && echo "$cmd" && bash -c "$cmd") >>"$4" 2>&1 || return 1
  if [[ $link == *" ${objectOf[$1]} "* ]]; then  # an object of the test itself: replaced
    cmd=${link/" ${objectOf[$1]} "/" $obj "}
    cmd=${cmd/" -o tests/unit_stream_exec "/" -o $3 "}
  else  # a library's: linked ahead of it
    cmd=${link/" -o tests/unit_stream_exec "/" -o $3 $obj "}
  fi
  (cd "$reuse" && echo "$cmd" && bash -c "$cmd") >>"$4" 2>&1
}

# run_tests BINARY LOG RUNS [FILTER]: 0 if every run passed, 1 as soon as one failed or ran past its bound.
run_tests() {
  local i rc
  for ((i = 1; i <= $3; ++i)); do
    echo "--- run $i" >>"$2"
    rc=0
    timeout -k 10 "$bound" "$1" --gtest_fail_fast --gtest_filter="${4:-*}" >>"$2" 2>&1 &
    child=$!
    wait "$child" || rc=$?
    child=
    echo "--- run $i exit status $rc" >>"$2"
    if [[ $rc != 0 ]]; then
      [[ $rc == 124 || $rc == 137 ]] && echo "--- run $i stalled past ${bound} s" >>"$2"
      return 1
    fi
  done
  return 0
}

# How a failing run failed: the failed tests' names, a crash, or a stall.
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

if [[ -n $reuse ]]; then
  reuse_prepare
  build_mutant=reuse_build
  echo "=== mutants built from $reuse"
else
  scratch_prepare
  build_mutant=scratch_build
  echo "=== mutants built in $work/build"
fi

echo "=== unmutated (must pass)"
: >"$logs/unmutated.log"
$build_mutant "${programs[0]}" "$(pristine "${programs[0]}")" "$mutants/unit_stream_exec.unmutated" "$logs/unmutated.log" ||
  { echo "build failed: $logs/unmutated.log" >&2; exit 1; }
if ! run_tests "$mutants/unit_stream_exec.unmutated" "$logs/unmutated.log" 1; then
  echo "the unmutated build fails: $(failure_of "$logs/unmutated.log") (log $logs/unmutated.log)" >&2
  exit 1
fi

# The mutants' stall bound: most removed waits are caught by a stall, which fails a test at its
# HETCCL_TIMEOUT -- 30 s in the tests, 5 s here (MUTATE_STALL_SECONDS; the unmutated run above keeps 30).
export HETCCL_TEST_STALL_SECONDS=${MUTATE_STALL_SECONDS:-5}

# mutate_one NAME: builds and runs the mutant without wait NAME; writes its table row to $work/rows/NAME,
# or "ERROR ..." when it could not be built.
mutate_one() {
  local name=$1 log=$logs/$1.log row=$work/rows/$1 t0 filter seed
  : >"$log"
  mutant_source "$name" "$work/src/$name.cc" 2>>"$log" || { echo "ERROR cannot remove wait:$name (see $log)" >"$row"; return; }
  $build_mutant "${fileOf[$name]}" "$work/src/$name.cc" "$mutants/unit_stream_exec.$name" "$log" "$name" ||
    { echo "ERROR build with wait:$name removed failed: $log" >"$row"; return; }
  t0=$SECONDS
  filter='*'
  [[ ${fileOf[$name]} == *net_ring_proxy.cc ]] && filter='*NetRing*'
  [[ ${fileOf[$name]} == *ll_protocol.cuh ]] && filter='*LatencyPath*'
  if run_tests "$mutants/unit_stream_exec.$name" "$log" "$runs" "$filter"; then
    printf '%-24s %-7s %s\n' "$name" MISSED "all tests passed $runs time(s)" >"$row"
  else
    seed=$(grep -o 'scheduler seed [0-9]*' "$log" | tail -1 | awk '{print $3}')
    printf '%-24s %-7s %s\n' "$name" caught "$(failure_of "$log") [seed $seed, $((SECONDS - t0)) s]" >"$row"
  fi
}

# With --build every mutant has files of its own: MUTATE_JOBS (default: the machine's cores) run at once --
# most of a mutant's time is one compile, one link and waits for a stall, which leave cores idle. The
# scratch tree (default) is one build: one at a time.
parallel=1
[[ -n $reuse ]] && parallel=${MUTATE_JOBS:-$(nproc)}
rm -rf "$work/rows" && mkdir -p "$work/rows"
for name in "${names[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $parallel ]]; do wait -n || true; done
  echo "=== removing wait:$name"
  mutate_one "$name" &
done
wait
rows=() missed=0
for name in "${names[@]}"; do
  row=$(cat "$work/rows/$name" 2>/dev/null || echo "ERROR no result for wait:$name")
  [[ $row == ERROR* ]] && { echo "${row#ERROR }" >&2; exit 1; }
  rows+=("$row")
  [[ $row == *" MISSED "* ]] && missed=$((missed + 1))
done
if [[ -z $reuse ]]; then
  for program in "${programs[@]}"; do cp "$(pristine "$program")" "$tree/$program" && touch "$tree/$program"; done
fi

echo "=== stream wait mutations ($((SECONDS - start)) s):"
printf '%-24s %-7s %s\n' wait result "failing tests"
printf '%s\n' "${rows[@]}"
if [[ $missed -gt 0 ]]; then
  echo "$missed wait(s) removed without any test failing" >&2
  exit 1
fi
