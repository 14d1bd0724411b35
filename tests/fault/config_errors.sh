#!/usr/bin/env bash
# Configuration that cannot work fails init on every rank with an error naming the variable and values:
#   transport   rank 0 HETCCL_TRANSPORT=shm, rank 1 tcp (was: "not a valid shm handle (magic 0x0)")
#   chunk       HETCCL_CHUNK_BYTES=1 (was accepted: a 4 MiB all-reduce took 32 s and 575 MB)
# Usage: config_errors.sh BUILD_DIR transport|chunk
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
  *) echo "unknown mode $mode"; exit 2 ;;
esac
status=$?
cat "$out"
fail=0
[[ $status == 0 ]] && { echo "FAIL: the job succeeded"; fail=1; }
n=$(grep -cF "$want" "$out")
[[ $n == 2 ]] || { echo "FAIL: $n of 2 ranks said: $want"; fail=1; }
[[ $fail == 0 ]] && echo "PASS ($mode)"
exit $fail
