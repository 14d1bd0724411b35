#!/usr/bin/env bash
# rma_stream.sh BUILD_DIR MODE [TRANSPORT]: stream-ordered RMA (rma_stream_check MODE) between HIP ranks on the
# fake HIP runtime, found as libamdhip64.so.7 exactly as in hip_ranks.sh. MODE: order, batch (3 ranks), kill (2 ranks:
# rank 1 SIGKILLs itself; hetccl-run must exit 137 and rank 0 report OK), abort (2 ranks: rank 1 stopped, rank 0
# aborts). TRANSPORT: shm (default) or tcp.
set -uo pipefail
build=$(cd "$1" && pwd)
mode=$2 transport=${3:-shm}
prog="$build/tests/fake_hip/rma_stream_check"
FAKE_ROCM_NEEDS=$prog source "$(dirname "$0")/fake_rocm_env.sh"
export HETCCL_DEVICE=hip HETCCL_TRANSPORT=$transport HETCCL_UCX=off HETCCL_DEBUG=${HETCCL_DEBUG:-WARN}
export HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-60}
# shm: the RMA pieces take the window (the default for GPU ranks of one host); tcp: the connections, device
# memory staged through pinned host memory (HETCCL_RMA_WINDOW=off), so that both paths run.
[[ $transport == tcp ]] && export HETCCL_RMA_WINDOW=off
run="$build/tools/hetccl-run"
case $mode in
  order|batch) n=3 expect=0 oks=3 ;;
  kill) n=2 expect=137 oks=1 ;;
  abort) n=2 expect=0 oks=2 ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
out=$(timeout 150 "$run" -n $n --domains $n --grace 20 --timeout 140 -- "$prog" "$mode" 2>&1)
status=$?
echo "$out"
if [[ $status -ne $expect ]]; then
  echo "FAIL rma_stream $mode ($transport): hetccl-run exited $status, expected $expect"
  exit 1
fi
got=$(grep -c "rma_stream_check: rank .*: OK" <<<"$out")
if [[ $got -ne $oks ]] || grep -q "rma_stream_check: rank .*: FAIL" <<<"$out"; then
  echo "FAIL rma_stream $mode ($transport): $got of $oks ranks reported OK"
  exit 1
fi
echo "PASS rma_stream $mode ($transport)"
