#!/usr/bin/env bash
# hip_ranks.sh BUILD_DIR: whole jobs of HIP ranks on the fake HIP runtime. Every process finds the fake as
# libamdhip64.so.7 (a link in BUILD_DIR/fake_rocm put first on LD_LIBRARY_PATH), exactly as the HIP plugin and
# hetccl-perf --device hip find a real ROCm: HETCCL_DEVICE=hip, the HIP plugin loaded by the core, device
# buffers from the fake, the stream pipeline's copies, flag waits and reduction kernels run by the fake's
# stream threads. Each hetccl-perf run checks every result (-c 1) and exits nonzero on a wrong element.
# Layouts: 3 ranks in 3 domains (pipeline; the latency path for small all-reduces, not taken when the fake reports
# one GPU for all), 2 ranks in the default domain 'hip' (no RCCL: pipeline in one
# domain), HETCCL_DEVICE=auto finding the HIP GPU (no CUDA plugin), ranks as separate hosts (host staging
# in pieces, over tcp and ucx; with HETCCL_GPU_EXEC=pipeline the stream pipeline between hosts), and RMA (hetccl_rma.h) on HIP device memory over shm and tcp
# (rma_device_check.cc).
set -euo pipefail
build=$(cd "$1" && pwd)
source "$(dirname "$0")/fake_rocm_env.sh"
export HETCCL_TIMEOUT=60 HETCCL_DEBUG=WARN
run="$build/tools/hetccl-run" perf="$build/tools/hetccl-perf"
failed=0
check() {  # check WHAT EXPECTED_PATH hetccl-run ARGS...
  local what=$1 expect=$2 out
  shift 2
  if ! out=$(HETCCL_DEBUG=INFO timeout 150 "$@" 2>&1); then
    echo "FAIL $what"
    # A sanitizer's report first (its head names the error and the stacks; the tail alone is its legend).
    grep -A40 -m1 "ERROR: \(Address\|Thread\|UndefinedBehavior\|Leak\)Sanitizer" <<<"$out" || true
    echo "$out" | grep -vE " INFO " | tail -15; failed=1; return
  fi
  if ! grep -q "device calls: $expect" <<<"$out"; then
    echo "FAIL $what: expected the path '$expect'"; grep -m3 "device calls:\|device: " <<<"$out"; failed=1; return
  fi
  grep -q "GPU plugin 'hip' loaded" <<<"$out" || { echo "FAIL $what: the HIP plugin did not load"; failed=1; return; }
  echo "ok   $what"
}
for coll in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  check "$coll, 3 HIP ranks in 3 domains" "stream pipeline" \
    env HETCCL_DEVICE=hip "$run" -n 3 --domains 3 --timeout 140 -- "$perf" $coll --device hip -b 8 -e 256K -f 32 -n 2 -w 1 -c 1
done
for t in "-d bfloat16 -o avg" "-d int64 -o max" "-d f8e4m3 -o sum" "-d double -o premulsum"; do
  check "all_reduce $t, 3 HIP ranks in 3 domains" "stream pipeline" \
    env HETCCL_DEVICE=hip "$run" -n 3 --domains 3 --timeout 140 -- "$perf" all_reduce $t --device hip -b 8 -e 64K -f 64 -n 2 -w 1 -c 1
done
# The latency path: small all-reduces among HIP ranks of one host run the HIP plugin's kernel (the fake runs the
# protocol's code, tests/support/ll_host_kernel.hpp); every rank must report calls by it.
out=$(HETCCL_DEBUG=INFO HETCCL_DEVICE=hip timeout 150 "$run" -n 3 --domains 3 --timeout 140 -- \
  "$perf" all_reduce -d bfloat16 -o avg --device hip -b 8 -e 64K -f 8 -n 2 -w 1 -c 1 2>&1) &&
  [[ $(grep -c " [1-9][0-9]* calls by the latency path" <<<"$out") == 3 ]] &&
  echo "ok   all_reduce bfloat16 avg, 3 HIP ranks in 3 domains, latency path" ||
  { echo "FAIL all_reduce, 3 HIP ranks, latency path"; grep -E "latency|wrong|FAIL" <<<"$out" | tail -8; failed=1; }
# Ranks on one GPU (the fake reports one PCI bus id for every device): the HIP plugin's deviceBusId tells the
# core, which keeps them off the latency path (their kernels would time-slice the GPU); results exact.
out=$(FAKEHIP_PCI_BUS_ID=0000:c1:00.0 HETCCL_DEBUG=INFO HETCCL_DEVICE=hip timeout 150 "$run" -n 3 --domains 3 --timeout 140 -- \
  "$perf" all_reduce --device hip -b 8 -e 4K -f 8 -n 2 -w 1 -c 1 2>&1) &&
  grep -q "share GPU 0000:c1:00.0" <<<"$out" && ! grep -q " [1-9][0-9]* calls by the latency path" <<<"$out" &&
  echo "ok   all_reduce, 3 HIP ranks sharing one GPU: no latency path" ||
  { echo "FAIL all_reduce, 3 HIP ranks sharing one GPU"; grep -E "latency|share|wrong|FAIL" <<<"$out" | tail -8; failed=1; }
check "all_reduce, 2 HIP ranks in the default domain" "stream pipeline" \
  env HETCCL_DEVICE=hip "$run" -n 2 --timeout 140 -- "$perf" all_reduce --device hip -b 8 -e 256K -f 32 -n 2 -w 1 -c 1
check "all_reduce, HETCCL_DEVICE=auto finds the HIP GPU" "stream pipeline" \
  env HETCCL_DEVICE=auto HETCCL_CUDA_PLUGIN=/nonexistent/libhetccl-cuda.so "$run" -n 2 --domains 2 --timeout 140 -- \
  "$perf" all_reduce -G -b 8 -e 64K -f 64 -n 2 -w 1 -c 1
# Ranks as separate hosts with HETCCL_GPU_EXEC=pipeline: the stream pipeline between hosts, rings to the
# other host mirrored by the ring proxy over tcp (and ucx where installed), 2 slots of 64 KiB (the proxy's
# credits pace every ring); 4 ranks, 2 per host, so shared rings and mirrored ones mix.
pipeline_transports=tcp
[[ -n $(ldconfig -p 2>/dev/null | grep 'libucp\.so\.0') ]] && pipeline_transports="tcp ucx"
for t in $pipeline_transports; do
  leaks=${ASAN_OPTIONS:-}
  [[ $t == ucx && -n $leaks ]] && leaks="$leaks:detect_leaks=0"
  for coll in "all_reduce" "all_gather" "reduce_scatter" "alltoall" "broadcast -r 3" "sendrecv"; do
    check "$coll, 4 HIP ranks on 2 hosts, stream pipeline between hosts, $t" "stream pipeline" \
      env ASAN_OPTIONS="$leaks" HETCCL_DEVICE=hip HETCCL_GPU_EXEC=pipeline HETCCL_TRANSPORT=$t UCX_TLS=tcp \
      HETCCL_GPU_CHUNK_BYTES=64K HETCCL_GPU_SLOTS=2 \
      "$run" -n 4 --domains 2 --host-ids 2 --timeout 140 -- "$perf" $coll --device hip -b 8 -e 1M -f 16 -n 2 -w 1 -c 1
  done
done
# Ranks as separate hosts: host staging, large calls cut into 64 KiB pieces through 2 slots (many pieces
# per call, slots reused within and across calls), over tcp and, where UCX is installed, ucx.
transports=tcp
[[ -n $(ldconfig -p 2>/dev/null | grep 'libucp\.so\.0') ]] && transports="tcp ucx"
for t in $transports; do
  # Under ASan, processes that load UCX run without the leak check (scripts/test.sh, asan stage, says why).
  leaks=${ASAN_OPTIONS:-}
  [[ $t == ucx && -n $leaks ]] && leaks="$leaks:detect_leaks=0"
  for coll in "all_reduce" "broadcast -r 1" "reduce -r 2" "all_gather"; do
    check "$coll, 3 HIP ranks on 3 hosts, staged in pieces, $t" "host staging" \
      env ASAN_OPTIONS="$leaks" HETCCL_DEVICE=hip HETCCL_TRANSPORT=$t UCX_TLS=tcp HETCCL_STAGED_PIECE_BYTES=64K HETCCL_STAGED_SLOTS=2 \
      "$run" -n 3 --host-ids 3 --timeout 140 -- "$perf" $coll --device hip -b 8 -e 1M -f 16 -n 2 -w 1 -c 1
  done
done
check "all_reduce int64 max, 2 HIP ranks on 2 hosts, staged whole (HETCCL_STAGED_PIECE_BYTES=0)" "host staging" \
  env HETCCL_DEVICE=hip HETCCL_TRANSPORT=tcp HETCCL_STAGED_PIECE_BYTES=0 \
  "$run" -n 2 --host-ids 2 --timeout 140 -- "$perf" all_reduce -d int64 -o max --device hip -b 8 -e 1M -f 16 -n 2 -w 1 -c 1
rma="$build/tests/fake_hip/rma_device_check"
if [[ -x $rma ]]; then  # RMA on HIP device memory: the target copies through IPC mappings (one vendor, one host)
  for t in shm tcp; do
    check "rma on HIP device memory, 3 ranks, $t, device to device (IPC)" "stream pipeline" \
      env HETCCL_DEVICE=hip HETCCL_TRANSPORT=$t HETCCL_UCX=off RMA_EXPECT_IPC=1 "$run" -n 3 --domains 3 --timeout 140 -- "$rma"
  done
  # 2 slots of 64 KiB: every transfer wraps the window many times, chunks' copies pipelined (window_path.cc)
  check "rma on HIP device memory, 3 ranks, window (HETCCL_RMA_IPC=off)" "stream pipeline" \
    env HETCCL_DEVICE=hip HETCCL_TRANSPORT=shm HETCCL_RMA_IPC=off RMA_EXPECT_IPC=0 HETCCL_RMA_WINDOW_SLOTS=2 HETCCL_RMA_WINDOW_BYTES=64K "$run" -n 3 --domains 3 --timeout 140 -- "$rma"
  check "rma on HIP device memory, 3 ranks as 3 hosts, tcp (staged)" "host staging" \
    env HETCCL_DEVICE=hip HETCCL_TRANSPORT=tcp HETCCL_UCX=off RMA_EXPECT_IPC=0 "$run" -n 3 --host-ids 3 --domains 3 --timeout 140 -- "$rma"
fi
exit $failed
