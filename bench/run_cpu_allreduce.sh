#!/usr/bin/env bash
# CPU all-reduce baseline: hetccl (one domain, then two domains) against MPI_Allreduce and Gloo, 2 ranks on
# this machine, float32 sum, 1 KiB .. 256 MiB. Each program runs RUNS times (default 3); the table shows,
# per size, the median out-of-place time as bus bandwidth and the ratio hetccl / max(MPI, Gloo).
# Writes bench/results/cpu_allreduce_<date>.md (+ the raw outputs in cpu_allreduce_<date>_raw/).
#
# Environment: BUILD_DIR (default <repo>/build-bench; configured and built here, Release, -j2),
#              RUNS (3), ITERS (20), WARMUP (5), MIN_BYTES (1K), MAX_BYTES (256M), FACTOR (2: size step).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}
RUNS=${RUNS:-3}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
MIN_BYTES=${MIN_BYTES:-1K}
MAX_BYTES=${MAX_BYTES:-256M}
FACTOR=${FACTOR:-2}
STAMP=$(date +%Y-%m-%d_%H%M)
OUT_MD=$REPO/bench/results/cpu_allreduce_$STAMP.md
RAW=$REPO/bench/results/cpu_allreduce_${STAMP}_raw
mkdir -p "$RAW"

echo "== building in $BUILD_DIR"
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETCCL_BUILD_BENCH=ON -DHETCCL_BUILD_TESTS=OFF \
  -DHETCCL_BUILD_CUDA=OFF >/dev/null
ninja -C "$BUILD_DIR" -j2 hetccl-perf hetccl-run mpi_allreduce gloo_allreduce >/dev/null

PERF=$BUILD_DIR/tools/hetccl-perf
RUN=$BUILD_DIR/tools/hetccl-run
MPI_BENCH=$BUILD_DIR/bench/mpi_allreduce
GLOO_BENCH=$BUILD_DIR/bench/gloo_allreduce
SWEEP="-b $MIN_BYTES -e $MAX_BYTES -f $FACTOR -n $ITERS -w $WARMUP -c 1"
MPIRUN_FLAGS="--bind-to none"
[ "$(id -u)" = 0 ] && MPIRUN_FLAGS="$MPIRUN_FLAGS --allow-run-as-root"

CMD_HETCCL1="$RUN -n 2 --domains 1 -- $PERF all_reduce $SWEEP"
CMD_HETCCL2="$RUN -n 2 --domains 2 -- $PERF all_reduce $SWEEP"
CMD_MPI="mpirun $MPIRUN_FLAGS -np 2 $MPI_BENCH $SWEEP"
CMD_GLOO="$GLOO_BENCH --size 2 --store STORE_DIR $SWEEP  (started twice: --rank 0 and --rank 1)"

run_gloo() {  # both ranks of the gloo benchmark, rendezvous through a fresh FileStore directory
  local store
  store=$(mktemp -d)
  "$GLOO_BENCH" --rank 1 --size 2 --store "$store" $SWEEP >/dev/null &
  local peer=$!
  "$GLOO_BENCH" --rank 0 --size 2 --store "$store" $SWEEP
  local rc=$?
  wait "$peer" || rc=$?
  rm -rf "$store"
  return $rc
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
failures=0
for run in $(seq 1 "$RUNS"); do
  for name in hetccl1 hetccl2 mpi gloo; do
    echo "== run $run/$RUNS: $name"
    log=$RAW/${name}_run$run.txt
    case $name in
      hetccl1) cmd=$CMD_HETCCL1 ;;
      hetccl2) cmd=$CMD_HETCCL2 ;;
      mpi) cmd=$CMD_MPI ;;
      gloo) cmd="run_gloo" ;;
    esac
    if ! $cmd >"$log" 2>&1; then
      echo "   FAILED (see $log)"
      failures=$((failures + 1))
    fi
  done
done

{
  echo "# CPU all-reduce: hetccl vs MPI vs Gloo ($(date -u +'%Y-%m-%d %H:%M UTC'))"
  echo
  echo "2 ranks on one machine, float32 sum, out-of-place. Each cell: bus bandwidth in GB/s (busbw = algbw * 2(n-1)/n)"
  echo "from the median time of $RUNS runs, and that time per iteration (us, max over ranks, averaged over $ITERS"
  echo "iterations after $WARMUP warm-up). Every result is checked exactly (#wrong must be 0)."
  echo "Ratio = hetccl busbw / max(MPI busbw, Gloo busbw): above 1, hetccl is faster than both."
  echo
  echo "## Machine"
  echo
  echo "- CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p')"
  echo "- cores: $(nproc) online ($(lscpu | sed -n 's/^CPU(s):[[:space:]]*//p') CPUs, $(lscpu | sed -n 's/^Thread(s) per core:[[:space:]]*//p') threads/core)"
  echo "- memory: $(free -g | awk '/^Mem:/{print $2}') GiB"
  echo "- kernel: $(uname -sr)"
  echo "- compiler: $(g++ --version | head -1)"
  echo "- packages: $(dpkg-query -W -f='${Package} ${Version}; ' openmpi-bin libopenmpi-dev libgloo-dev 2>/dev/null)"
  echo "- hetccl: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown) (working tree may be modified), Release build"
  echo "- load average (1/5/15 min) at start: $LOAD_START; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "  (above $(nproc) the programs competed with other work for the cores: re-run before trusting the numbers)"
  echo
  echo "## Results"
  echo
  python3 "$REPO/bench/summarize_allreduce.py" "$RAW" "$RUNS"
  echo
  echo "## Commands"
  echo
  echo '```'
  echo "$CMD_HETCCL1"
  echo "$CMD_HETCCL2"
  echo "$CMD_MPI"
  echo "$CMD_GLOO"
  echo '```'
  echo
  echo "Raw outputs: \`$(basename "$RAW")/\`. Failed runs: $failures."
} >"$OUT_MD"

echo "== wrote $OUT_MD"
[ "$failures" = 0 ]
