#!/usr/bin/env bash
# Configuration that cannot work fails init on every rank with an error naming the variable and values:
#   transport   rank 0 HETCCL_TRANSPORT=shm, rank 1 tcp (was: "not a valid shm handle (magic 0x0)")
#   chunk       HETCCL_CHUNK_BYTES=1 (was accepted: a 4 MiB all-reduce took 32 s and 575 MB)
#   gpu_exec    HETCCL_GPU_EXEC=fast on CPU ranks (was accepted: only GPU paths read it)
#   tcp_sockets HETCCL_TCP_SOCKETS=100 on one host (was accepted: shm links never read it)
#   misspelled  HETCCL_TIMEOUTT=5 (was ignored without a word): the job runs, each rank warns once
# Cost: each mode is a 2-rank job of one 4 KiB all-reduce, about 1 s.
# Usage: config_errors.sh BUILD_DIR transport|chunk|gpu_exec|tcp_sockets|misspelled
set -u
build=$1
mode=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
export HETCCL_TIMEOUT=30
perf="$build/tools/hetccl-perf all_reduce -b 4K -e 4K -n 1 -w 0"
case $mode in
  transport)
    want="ranks disagree on the transport: rank 0 has HETCCL_TRANSPORT (or the config's netName) 'shm', rank 1 has 'tcp'"
    timeout 120 "$build/tools/hetccl-run" -n 2 -- bash -c \
      "if [ \$HETCCL_RANK = 0 ]; then export HETCCL_TRANSPORT=shm; else export HETCCL_TRANSPORT=tcp; fi; exec $perf" \
      >"$out" 2>&1 ;;
  chunk)
    want="HETCCL_CHUNK_BYTES=1 is outside [4096, 1073741824]"
    HETCCL_CHUNK_BYTES=1 timeout 120 "$build/tools/hetccl-run" -n 2 -- $perf >"$out" 2>&1 ;;
  gpu_exec)
    want="HETCCL_GPU_EXEC='fast' is not one of auto, pipeline, staged"
    HETCCL_GPU_EXEC=fast timeout 120 "$build/tools/hetccl-run" -n 2 -- $perf >"$out" 2>&1 ;;
  tcp_sockets)
    want="HETCCL_TCP_SOCKETS=100 is outside [1, 16]"
    HETCCL_TCP_SOCKETS=100 timeout 120 "$build/tools/hetccl-run" -n 2 -- $perf >"$out" 2>&1 ;;
  misspelled)
    want="unknown configuration variable HETCCL_TIMEOUTT (did you mean HETCCL_TIMEOUT?) is ignored"
    HETCCL_TIMEOUTT=5 timeout 120 "$build/tools/hetccl-run" -n 2 -- $perf >"$out" 2>&1 ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
status=$?
cat "$out"
fail=0
if [[ $mode == misspelled ]]; then  # a warning, not an error: the job runs
  [[ $status == 0 ]] || { echo "FAIL: the job failed ($status)"; fail=1; }
else
  [[ $status == 0 ]] && { echo "FAIL: the job succeeded"; fail=1; }
fi
n=$(grep -cF "$want" "$out")
[[ $n == 2 ]] || { echo "FAIL: $n of 2 ranks said: $want"; fail=1; }
[[ $fail == 0 ]] && echo "PASS ($mode)"
exit $fail
