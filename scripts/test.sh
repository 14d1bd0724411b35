#!/usr/bin/env bash
# Builds hetccl and runs the whole test suite, stage by stage (each prints its wall time at the end):
#   normal   RelWithDebInfo build (-O2 -g1; and the CUDA plugin, whose GPU tests skip without a GPU): the
#            unit, python, tools, install and GPU tests, the full-size multi-process sweeps (label sweep)
#            and the multi-process layout matrix (label layout), then
#            the mutation check of the stream pipeline's waits (scripts/mutate-stream-waits.sh). The other
#            multi-process, fault, soak and race tests run in the asan stage (and the netns smoke tests
#            in the netns stage) when that stage runs; alone (--no-sanitizers) this stage runs them all.
#   asan     clang-14 AddressSanitizer + UndefinedBehaviorSanitizer build (-O1 -g1): every test of its build (not
#            python, not the CUDA plugin's), the sweeps at a tenth of the bytes, of the multi-process
#            layout matrix (label layout) the widest layout per transport
#   tsan     ThreadSanitizer build of the tests that run threads against each other: unit tests of the
#            bootstrap, transports, engine, stream executor and C API, the fault tests (but the
#            multi-process fault_checksum_* coll_check runs) and the soak
#   fuzz     clang-14 libFuzzer build of the fuzz targets only: each replays its seed corpus, then fuzzes
#            HETCCL_FUZZ_SECONDS, two targets at a time
#   netns    (root) the CI set of fault cases (run_faults.py --cases ci) HETCCL_NETNS_RUNS times each, the
#            whole set (all, split cases included; HETCCL_NETNS_UCX_CASES) over the ucx transport
#            HETCCL_NETNS_UCX_RUNS (3) times each, the
#            wide set (split/finalize faults) at 4 and 8 ranks HETCCL_NETNS_WIDE_RUNS (10) times each, with
#            ranks in network namespaces, and the hostile-traffic job; skipped with a message where
#            namespaces are unavailable. The full set: docs/RELIABILITY.md
# The summary says "all stages passed" only when nothing was skipped: a stage that skipped (netns without
# namespaces) or skipped tests (exit 77, gtest skips: the GPU tests without a GPU) is listed as SKIPPED,
# with what. HETCCL_TEST_REQUIRE_GPU=1 (on a machine with a GPU) makes every skipped GPU test a failure.
# Usage: bash scripts/test.sh [--quick | --no-sanitizers | --stages normal,asan,tsan,fuzz,netns]
#   --quick: the inner loop (a few minutes on 2 cores once ./build exists): builds the unit-test binaries
#   in ./build and runs the unit tests (ctest -L unit), nothing else. --no-sanitizers: the normal stage
#   only. Knobs: HETCCL_FUZZ_SECONDS (20), HETCCL_NETNS_RUNS (20), HETCCL_NETNS_PARALLEL (4),
#   HETCCL_NETNS_CASES (ci; or all, or a list), HETCCL_SOAK_SECONDS (20).
# The sanitizer stages build with HETCCL_TEST_SWEEP=light: the heavy multi-process sweeps move a tenth of
# the bytes in smaller chunks (same code paths; tests/mp/CMakeLists.txt).
# At the end: every stage's wall time and the total.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

stages=normal,asan,tsan,fuzz,netns
case "${1:-}" in
  --quick) stages=quick ;;
  --no-sanitizers) stages=normal ;;
  --stages) stages=${2:?--stages needs a list} ;;
  "") ;;
  *) echo "usage: bash scripts/test.sh [--quick | --no-sanitizers | --stages normal,asan,tsan,fuzz,netns]" >&2; exit 2 ;;
esac
wanted() { [[ ",$stages," == *",$1,"* ]]; }

timings=()
total_start=$SECONDS
skipped=()      # "stage: what" for every stage that skipped, or skipped some of its tests
stage_skips=""  # what the running stage skipped (set by note_skipped_tests, or by the stage itself)
stage() {  # stage NAME COMMAND...: runs it and records its wall time and what it skipped
  local name=$1 start=$SECONDS status=passed
  shift
  echo "=== stage $name"
  stage_skips=""
  "$@"
  if [[ -n $stage_skips ]]; then
    status="SKIPPED $stage_skips"
    skipped+=("$name: $stage_skips")
  fi
  timings+=("$(printf '%-7s %4d s  %s' "$name" $((SECONDS - start)) "$status")")
  echo "=== stage $name done in $((SECONDS - start)) s ($status)"
}

# run_ctest BUILD_DIR [ctest args...]: ctest with its output kept; tests it skipped (exit 77, gtest
# skips) are noted for the summary. With HETCCL_TEST_REQUIRE_GPU=1 a skipped test labelled gpu fails.
run_ctest() {
  local dir=$1
  shift
  ctest --test-dir "$dir" "$@" 2>&1 | tee "$dir/ctest-stage.log"
  note_skipped_tests "$dir"
}

note_skipped_tests() {  # note_skipped_tests BUILD_DIR: reads BUILD_DIR/ctest-stage.log
  local names gpu_names gpu_skipped
  names=$(sed -n 's/^[[:space:]]*[0-9][0-9]* - \(.*\) (Skipped)$/\1/p' "$1/ctest-stage.log")
  [[ -n $names ]] || return 0
  local count shown
  count=$(wc -l <<<"$names")
  shown=$(head -n 8 <<<"$names" | paste -sd' ')
  [[ $count -gt 8 ]] && shown+=" and $((count - 8)) more"
  stage_skips+="${stage_skips:+; }$count test(s) skipped: $shown"
  if [[ ${HETCCL_TEST_REQUIRE_GPU:-0} == 1 ]]; then
    gpu_names=$(ctest --test-dir "$1" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: //p')
    gpu_skipped=$(grep -Fxf <(printf '%s\n' "$gpu_names") <<<"$names" || true)
    if [[ -n $gpu_skipped ]]; then
      echo "HETCCL_TEST_REQUIRE_GPU=1 but GPU tests were skipped: $(paste -sd' ' <<<"$gpu_skipped")" >&2
      return 1
    fi
  fi
}

configure_and_build() {  # configure_and_build BUILD_DIR [cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DHETCCL_SOAK_SECONDS="${HETCCL_SOAK_SECONDS:-20}" "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

run_suite() {  # run_suite BUILD_DIR [ctest args...] -- [cmake args...]
  local dir=$1 ctest_args=() 
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do ctest_args+=("$1"); shift; done
  shift
  configure_and_build "$dir" "$@"
  run_ctest "$dir" --output-on-failure -j "$jobs" --timeout 300 ${ctest_args[@]+"${ctest_args[@]}"}
}

clang=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)  # the asan and fuzz builds
# -g1 (line tables, what backtraces and sanitizer reports need): a test file compiles in ~5 s instead of ~7.5 s.
normal_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
              -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DHETCCL_BUILD_TESTS=ON -DHETCCL_REQUIRE_HIP=ON
              -DHETCCL_TEST_SWEEP=full)

quick() {
  # The unit-test binaries of tests/unit/<area> in ./build, configured as the normal stage configures it
  # (the two share every object); hip_kernels_real_hiprtc (label unit too) needs the HIP plugin's kernels,
  # test_no_doubles_in_library the drop-in libraries.
  local targets=(hetccl-hip hetccl_nccl hetccl_rccl) area
  for area in tests/unit/*/; do targets+=("unit_$(basename "$area")"); done
  cmake -S . -B build -G Ninja -DHETCCL_SOAK_SECONDS="${HETCCL_SOAK_SECONDS:-20}" "${normal_flags[@]}" >/dev/null
  cmake --build build -j "$jobs" --target "${targets[@]}"
  run_ctest build --output-on-failure -j "$jobs" --timeout 300 -L '^unit$' -E '_NOT_BUILT$'
}

normal() {
  # Nothing is run twice without a reason: the netns smoke tests are left to the netns stage (which runs
  # their cases in full), and the multi-process, fault, soak and race tests to the asan stage (which runs
  # every test of this build but python and the CUDA plugin's; tsan runs fault, soak and race again,
  # race-checked) -- but for the full-size sweeps (label sweep), which run only here: the sanitizer
  # builds move a tenth of their bytes, and the layout matrix of the multi-process tests (label layout),
  # of which the asan stage runs the widest layout per transport only (tests/mp/CMakeLists.txt says why).
  # Alone (--no-sanitizers) this stage runs everything.
  local skip=() exclude=()
  wanted netns && skip+=(netns)
  wanted asan && skip+=(mp fault soak race)
  [[ ${#skip[@]} -gt 0 ]] && exclude=(-LE "^($(IFS='|'; echo "${skip[*]}"))\$")
  run_suite build ${exclude[@]+"${exclude[@]}"} -- "${normal_flags[@]}"
  if wanted asan; then
    run_ctest build --output-on-failure -j "$jobs" --timeout 600 -L '^(sweep|layout)$'
  fi
  # Every wait of the stream pipeline removed in turn must fail a unit_stream_exec test (mutants built
  # from ./build's own commands into build-mutate/, as many at once as the machine has cores: 86-89 s on the
  # 2-core VM against 142 s one at a time, 15 of 15 caught either way, 2026-12-07).
  bash scripts/mutate-stream-waits.sh --build build
}

asan() {
  # Processes that load UCX run without LeakSanitizer's exit-time check (ASan and UBSan stay on): that
  # check crashed in them now and then ("Tracer caught signal 11", LeakSanitizer's own thread, in a ucx rank
  # at exit: mp_ucx_n5_2p1p2 and mp_ucx_stamp_allreduce_vs_reduce in two CI runs of 2026-11-25; also with
  # UCX_MEM_EVENTS=no, which made it rarer: 11 of 210 five-rank ucx jobs under load without, 0 of 150
  # with). So leaks in code that only ucx runs (src/transport/ucx) are not checked here.
  # clang-14, not g++: the same ASan+UBSan checks and more (UBSan's float-cast-overflow; less only its
  # -fsanitize=function, which g++ does not have and which every call through a dlsym'd table of entry
  # points fails by design: CMakeLists.txt), and the build takes 298 s instead of g++'s 510 s on the 2-core
  # CI machine (2026-12-07; a test file 5.1 vs 8.3 s, unit/rma/api_test.cc, both with the shared
  # GoogleTest header), the stage 646 s instead of 866 s; the tests take the same time (347 vs 354 s).
  # Not run twice: python_pip_build (a build of its own inside pip, no sanitizer: ~2 min of both cores)
  # and hip_kernels_real_hiprtc (a python script comparing hiprtc's output with the embedded code object,
  # ~23 s: no host code of this build runs); the normal stage runs both. Not built twice: the HIP plugin's
  # device code (clang-16, no sanitizer in it) is embedded for gfx90a only (15-24 s of a core per code
  # object; HipPluginCodeObjects checks the ones embedded, the normal stage's all three).
  # Not under ASan either: the 10^6-notification queue tests (a complexity bound on one thread's data
  # structure, 15-20 s each in the normal build and several times that here; the queue's other tests run).
  # -g1: line tables are all a sanitizer report needs, and the build is faster without full debug info.
  local ucx='(ucx|Ucx|UCX)' million='^Transports/RmaNotifyQueue\.Million'
  UCX_MEM_EVENTS=no ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp" \
    run_suite build-asan -E "$ucx|^(python_pip_build|hip_kernels_real_hiprtc)\$|$million" -LE '^layout$' -- "${clang[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DHETCCL_SANITIZE=address,undefined -DHETCCL_BUILD_CUDA=OFF -DHETCCL_TEST_SWEEP=light \
    -DHETCCL_HIP_OFFLOAD_ARCHS=gfx90a
  UCX_MEM_EVENTS=no ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest build-asan --output-on-failure -j "$jobs" --timeout 300 -R "$ucx" -LE '^layout$'
}

tsan() {
  # Only what runs threads against each other: the bootstrap, transport, engine, stream-executor, RMA
  # (deregister against transfers), agent (posts from many threads, deregister, cancel, destroy) and C API (abort from another thread) unit tests, the drop-in's
  # abort/destroy races (label race), the fault tests and the soak. A race makes the test fail (TSan's
  # exit code 66) with both stacks in its output.
  cmake -S . -B build-tsan -G Ninja -DHETCCL_SOAK_SECONDS="${HETCCL_SOAK_SECONDS:-20}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DHETCCL_SANITIZE=thread -DHETCCL_BUILD_CUDA=OFF -DHETCCL_TEST_SWEEP=light >/dev/null
  cmake --build build-tsan -j "$jobs" --target unit_bootstrap unit_transport unit_engine unit_stream_exec unit_api unit_rma unit_agent \
    hetccl_nccl hetccl_rccl nccl_abi_abort_race fault_kill fault_integrity fault_hostile_transport fault_fork_child hetccl_soak \
    hetccl-run netns_fault_rank
  # -L: the unit tests of the targets built above (the others stand as unlabelled *_NOT_BUILT entries).
  # -E: tests that need hetccl-perf / coll_check / fault_rma_kill, or the HIP plugin's build outputs (not
  # built here; they run in the normal and asan stages), the 10^6-notification queue test (one
  # thread's data structure: nothing for TSan to find, and about 10x slower under it), the 4-million-range
  # batch refusal (argument checking at the call, 45-64 s each under TSan), the three 100003-element
  # cases of HierVendorChunkTest (68-141 s each under TSan; their 40001-element cases run the same chunked
  # paths and stay), and of the hierarchical layout matrix the widest and the most repeated layouts
  # (70-137 s each under TSan, 1175 of its 2015 s of test time in the first run of 2026-11-29): each of
  # HierVendorLayoutTest, HierVendorHostsTest and HierVendorChunkTest keeps one-, two- and three-domain,
  # interleaved and cross-host layouts of up to 6 ranks, the same threads and waits as the ones left out,
  # whose arithmetic the normal and asan stages check.
  # UCX_MEM_EVENTS=no: UCX's memory-event hooks (it patches mmap/munmap & co. to keep its registration
  # cache valid) crash every process under TSan's interceptors (SIGSEGV at the first UCP context); host
  # memory over tcp needs no registration cache, and the ucx tests then run race-checked like the others.
  UCX_MEM_EVENTS=no TSAN_OPTIONS=second_deadlock_stack=1 run_ctest build-tsan --output-on-failure -j "$jobs" --timeout 300 \
    -L '^(unit|fault|soak|race)$' \
    -E '^(fault_(checksum_|secrets_|shm_space_|config_|rma_kill_)|hip_kernels_real_hiprtc|Transports/RmaNotifyQueue\.Million.*|Transports/RmaBatchLimit\..*|Layouts/HierVendorChunkTest\.PipelinedChunksAreExact/.*_count_100003|Layouts/HierVendorLayoutTest\.EveryCollectiveIsExact/(4_4|6_2|interleaved_100110)|Hosts/HierVendorHostsTest\.EveryCollectiveIsExact/(4_4|2_2_2|3_1)_.*|Layouts/HierVendorChunkTest\.PipelinedChunksAreExact/(2_2_2|interleaved_100110)_count_40001)'
}

fuzz() {
  # -g1: line tables, all a crash report needs (as the other builds). The fuzz targets need the libraries
  # below the communicator only (tests/fuzz/CMakeLists.txt): ~110 build steps, 82 s on the 2-core VM
  # (2026-12-08; 183 steps and ~160 s when fuzz_agent_wire linked hetccl_agent).
  cmake -S . -B build-fuzz -G Ninja "${clang[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETCCL_FUZZ=ON \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DHETCCL_BUILD_CUDA=OFF >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz_all
  run_ctest build-fuzz --output-on-failure -L fuzz  # every committed seed still passes
  bash tests/fuzz/run_fuzzers.sh build-fuzz "${HETCCL_FUZZ_SECONDS:-20}" "$jobs"
}

netns() {
  [[ -x build/tests/netns/netns_fault_rank ]] || configure_and_build build "${normal_flags[@]}"
  local rc=0
  python3 tests/netns/run_faults.py --build build --runs "${HETCCL_NETNS_RUNS:-20}" \
    --parallel "${HETCCL_NETNS_PARALLEL:-4}" --cases "${HETCCL_NETNS_CASES:-ci}" || rc=$?
  if [[ $rc == 0 ]]; then  # every case (split ones too) with the ucx transport between the hosts: ~30 s
    python3 tests/netns/run_faults.py --build build --runs "${HETCCL_NETNS_UCX_RUNS:-3}" \
      --parallel "${HETCCL_NETNS_PARALLEL:-4}" --cases "${HETCCL_NETNS_UCX_CASES:-all}" --transport ucx --stacks || rc=$?
    [[ $rc == 77 ]] && rc=0  # libucp missing: said above; the tcp runs stand
  fi
  if [[ $rc == 0 ]]; then  # split/finalize faults at 4 and 8 ranks (the wide set; 10 runs per case each)
    for n in 4 8; do
      python3 tests/netns/run_faults.py --build build --runs "${HETCCL_NETNS_WIDE_RUNS:-10}" --nranks $n \
        --parallel 2 --cases wide || rc=$?  # 8 ranks a job: 2 jobs on a 2-core machine
    done
  fi
  if [[ $rc == 77 ]]; then
    echo "netns stage skipped (see above)"
    stage_skips="(network namespaces unavailable: no fault case ran)"
    return 0
  fi
  [[ $rc == 0 ]] || return $rc
  python3 tests/netns/run_hostile.py --build build --runs 3
}

for s in quick normal asan tsan fuzz netns; do
  if wanted $s; then stage $s $s; fi
done
if [[ ${#skipped[@]} -gt 0 ]]; then
  echo "=== no stage failed, but not everything ran: SKIPPED in ${#skipped[@]} stage(s):"
  printf '  %s\n' "${skipped[@]}"
else
  echo "=== all stages passed"
fi
echo "=== wall time per stage:"
printf '  %s\n' "${timings[@]}"
printf '  %-7s %4d s  (%d min)\n' total $((SECONDS - total_start)) $(((SECONDS - total_start + 59) / 60))
