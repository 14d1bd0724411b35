#!/usr/bin/env bash
# Hierarchical collectives with NCCL inside every domain (issue 13) on one H100: the binaries of the
# build (stripped, carried as .dev/build; CTest files name /work/main/build, linked here), then:
#   1. every ctest labelled gpu, HETCCL_TEST_REQUIRE_GPU=1 (a skip fails); gpu_hier_vendor_* and
#      gpu_graph_hier_vendor force the vendor path (HETCCL_ALGO=hier: on one GPU every domain has one rank);
#   2. the proof that the vendor ran: coll_check_gpu at INFO, 3 domains, HETCCL_ALGO=hier; every rank's
#      traffic line must count domain collectives and the log must show the per-domain NCCL communicators;
#   3. torch.distributed collectives through the drop-in, 2 ranks in 2 domains, HETCCL_ALGO=hier;
#   4. hetccl-perf all_reduce, HETCCL_ALGO=hier vs auto (2 ranks time-slicing GPU 0: a sanity check of
#      the path, not performance evidence).
# Output: $OUT/summary.txt, $OUT/logs.txt (every log), $OUT/machine.txt.
set -uo pipefail
repo=$PWD
o=${OUT:-/tmp/merged-out}
mkdir -p "$o" /work/main
[[ $repo == /work/main ]] || for d in tests src tools; do ln -sfn "$repo/$d" /work/main/$d; done
[[ -e /work/main/build ]] || ln -sfn "$repo/.dev/build" /work/main/build
for l in libhetccl.so.0 libhetccl.so; do [[ -e /work/main/build/$l ]] || ln -s libhetccl.so.0.1.0 /work/main/build/$l; done
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=60 LD_LIBRARY_PATH=/work/main/build:/usr/local/cuda/lib64:/usr/local/cuda/lib
export HETCCL_CUDA_PLUGIN=/work/main/build/libhetccl-cuda.so
nccl=$(ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1)
[[ -n $nccl ]] && export HETCCL_NCCL_LIB=$nccl
{ date -u; nvidia-smi; uname -a; ls -la /usr/local/cuda/lib* | head -3
  /opt/torch/.venv/bin/python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  echo "HETCCL_NCCL_LIB=$nccl"; } >"$o/machine.txt" 2>&1
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  timeout "$limit" "$@" >"$o/$name.log" 2>&1
  rc=$?
  printf '%-26s rc=%-3s %4d s  %s\n' "$name" "$rc" "$((SECONDS - t0))" "$*" | tee -a "$o/summary.txt"
}
HETCCL_TEST_REQUIRE_GPU=1 step ctest_gpu 420 ctest --test-dir /work/main/build -L gpu --output-on-failure --timeout 120
grep -E "tests passed|Failed|Not Run|\*\*\*" "$o/ctest_gpu.log" | head -20 >>"$o/summary.txt"
HETCCL_DEBUG=INFO HETCCL_ALGO=hier HETCCL_DEVICE=cuda step info_hier_3x1 200 /work/main/build/tools/hetccl-run -n 3 \
  --domains 3 --timeout 190 -- /work/main/build/tests/gpu/coll_check_gpu --sizes 1,65537,3000001
grep -E "device traffic|created NCCL|device calls|hier|domain comm" "$o/info_hier_3x1.log" | head -20 >>"$o/summary.txt"
export PATH=/opt/torch/.venv/bin:$PATH
HETCCL_ALGO=hier RANK_DOMAINS=2 RANK_PRELOAD=/work/main/build/dropin/libnccl.so.2 step torch_collectives_hier 200 \
  torchrun --standalone --nproc_per_node 2 --no_python bash /work/main/tests/torch/rank_env.sh \
  python3 /work/main/tests/torch/collectives.py
tail -3 "$o/torch_collectives_hier.log" >>"$o/summary.txt"
for algo in hier auto; do
  HETCCL_ALGO=$algo HETCCL_DEVICE=cuda step perf_$algo 100 /work/main/build/tools/hetccl-run -n 2 --domains 2 --timeout 95 -- \
    /work/main/build/tools/hetccl-perf all_reduce -G -b 64K -e 256M -f 4 -n 10 -w 3
  grep -E "^ +[0-9]" "$o/perf_$algo.log" >>"$o/summary.txt"
done
for f in "$o"/*.log; do echo "######## $(basename "$f")"; cat "$f"; done >"$o/logs.txt" && rm -f "$o"/*.log
cat "$o/summary.txt"
