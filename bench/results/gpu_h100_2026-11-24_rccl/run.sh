#!/usr/bin/env bash
# The RCCL flavour of the vendor adaptor (issue 14) on one H100, against NCCL renamed as RCCL (same API):
# a copy of the pip wheel's libnccl.so.2 as /tmp/rocm/lib/librccl.so.1. The binaries of the build
# (stripped, carried as .dev/build; CTest files name /work/main/build, linked here). Steps:
#   rccl_hier_2x1 / 3x1   coll_check_gpu, one rank per domain, HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl: the
#                         phases inside every domain through the RCCL code path; the log must name RCCL
#   rccl_search_1         one rank (delegation), HETCCL_RCCL_LIB unset, ROCM_PATH=/tmp/rocm: found by the search
#   ctest_gpu (run.sh ctest) every ctest labelled gpu (the CUDA paths after the device-selection change), with
#                         libhetccl-hip.so next to the drop-ins (CUDA ranks must not be disturbed by it)
#   rccl_graph_1 / 2x1    graph capture + replay through the RCCL path (delegation; inside domains)
#   rccl_missing_2x1      HETCCL_VENDOR_CCL=rccl and no RCCL anywhere: every rank falls back alike, still exact
#   torch_mixed_dropins   torch.distributed collectives, rank 0 LD_PRELOADs hetccl's libnccl.so.2, rank 1 its
#                         librccl.so; 2 domains; HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl
#   torch_mixed_auto      the same with HETCCL_VENDOR_CCL=auto and HETCCL_ALGO=auto
# Output: $OUT/summary.txt, $OUT/logs.txt (every log), $OUT/machine.txt.
set -uo pipefail
repo=$PWD
o=${OUT:-/tmp/rccl-out}
mkdir -p "$o" /work/main
[[ $repo == /work/main ]] || for d in tests src tools; do ln -sfn "$repo/$d" /work/main/$d; done
[[ -e /work/main/build ]] || ln -sfn "$repo/.dev/build" /work/main/build
for l in libhetccl.so.0 libhetccl.so; do [[ -e /work/main/build/$l ]] || ln -s libhetccl.so.0.1.0 /work/main/build/$l; done
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=60 LD_LIBRARY_PATH=/work/main/build:/usr/local/cuda/lib64:/usr/local/cuda/lib
export HETCCL_CUDA_PLUGIN=/work/main/build/libhetccl-cuda.so
nccl=$(ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1)
mkdir -p /tmp/rocm/lib && cp "$nccl" /tmp/rocm/lib/librccl.so.1
rccl=/tmp/rocm/lib/librccl.so.1
{ date -u; nvidia-smi; uname -a
  /opt/torch/.venv/bin/python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  echo "RCCL stand-in: $rccl (copy of $nccl)"; } >"$o/machine.txt" 2>&1
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  timeout "$limit" "$@" >"$o/$name.log" 2>&1
  rc=$?
  printf '%-22s rc=%-3s %4d s  %s\n' "$name" "$rc" "$((SECONDS - t0))" "$*" | tee -a "$o/summary.txt"
}
b=/work/main/build
if [[ ${1:-} == ctest ]]; then  # a second call (one call may last 10 minutes)
  HETCCL_TEST_REQUIRE_GPU=1 step ctest_gpu 560 ctest --test-dir /work/main/build -L gpu --output-on-failure --timeout 120
  grep -E "tests passed|Failed|Not Run|\*\*\*" "$o/ctest_gpu.log" | head -20 >>"$o/summary.txt"
  for f in "$o"/*.log; do echo "######## $(basename "$f")"; cat "$f"; done >"$o/logs.txt" && rm -f "$o"/*.log
  exit 0
fi
run="$b/tools/hetccl-run"
check="$b/tests/gpu/coll_check_gpu"
export HETCCL_DEVICE=cuda
HETCCL_DEBUG=INFO HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl HETCCL_RCCL_LIB=$rccl step rccl_hier_2x1 150 \
  $run -n 2 --domains 2 --timeout 140 -- $check
grep -E "created RCCL|device calls|RCCL" "$o/rccl_hier_2x1.log" | sort | uniq -c | head -8 >>"$o/summary.txt"
HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl HETCCL_RCCL_LIB=$rccl step rccl_hier_3x1 150 \
  $run -n 3 --domains 3 --timeout 140 -- $check --sizes 0,1,7,65537,3000001
# (run1 failed here: NCCL's single-rank path gets 8-byte avg/premulsum wrong and refuses fp8 ones,
# single_rank_nccl.txt; fixed in src/comm/vendor_route.cc; nccl_one_rank: the same under NCCL's own name)
HETCCL_DEBUG=INFO HETCCL_VENDOR_CCL=rccl ROCM_PATH=/tmp/rocm step rccl_search_1 120 $run -n 1 --timeout 110 -- $check
HETCCL_NCCL_LIB=$nccl step nccl_one_rank 120 $run -n 1 --timeout 110 -- $check
grep -E "RCCL|device calls" "$o/rccl_search_1.log" | sort | uniq -c | head -6 >>"$o/summary.txt"
HETCCL_VENDOR_CCL=rccl HETCCL_RCCL_LIB=$rccl step rccl_graph_1 120 $run -n 1 --timeout 110 -- $b/tests/gpu/graph_check
HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl HETCCL_RCCL_LIB=$rccl step rccl_graph_2x1 150 \
  $run -n 2 --domains 2 --timeout 140 -- $b/tests/gpu/graph_check
HETCCL_DEBUG=INFO HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl step rccl_missing_2x1 120 \
  $run -n 2 --domains 2 --timeout 110 -- $check --sizes 1,65537
grep -E "device calls" "$o/rccl_missing_2x1.log" | head -2 >>"$o/summary.txt"
export PATH=/opt/torch/.venv/bin:$PATH HETCCL_DEVICE=auto
HETCCL_ALGO=hier HETCCL_VENDOR_CCL=rccl HETCCL_RCCL_LIB=$rccl HETCCL_DEBUG=INFO RANK_DOMAINS=2 \
  RANK_PRELOAD=$b/dropin/libnccl.so.2 RANK_PRELOAD_ODD=$b/dropin/librccl.so step torch_mixed_dropins 150 \
  torchrun --standalone --nproc_per_node 2 --no_python bash /work/main/tests/torch/rank_env.sh \
  python3 /work/main/tests/torch/collectives.py
grep -E "GPU plugin|created RCCL|device: " "$o/torch_mixed_dropins.log" | sort | uniq -c | head -8 >>"$o/summary.txt"
tail -3 "$o/torch_mixed_dropins.log" >>"$o/summary.txt"
RANK_DOMAINS=2 RANK_PRELOAD=$b/dropin/libnccl.so.2 RANK_PRELOAD_ODD=$b/dropin/librccl.so step torch_mixed_auto 150 \
  torchrun --standalone --nproc_per_node 2 --no_python bash /work/main/tests/torch/rank_env.sh \
  python3 /work/main/tests/torch/collectives.py
tail -3 "$o/torch_mixed_auto.log" >>"$o/summary.txt"
for f in "$o"/*.log; do echo "######## $(basename "$f")"; cat "$f"; done >"$o/logs.txt" && rm -f "$o"/*.log
cat "$o/summary.txt"
