#!/usr/bin/env bash
# Issue 11 (graphs helper) on one GPU: prebuilt binaries (new/: branch h-graphs, old/: main before it),
# two ranks on GPU 0 in separate domains. Logs and summary.txt go to $OUT.
#   usage: run.sh [steps...]   (default: every step, in the order below)
cd "$(dirname "$0")"
here=$PWD
o=${OUT:-/tmp/graphs-out}
mkdir -p "$o"
export NCCL_NVLS_ENABLE=0 HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60
nccl=$(ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1)
[[ -n $nccl ]] && export HETCCL_NCCL_LIB=$nccl
use() {  # use new|old: libraries and plugin of that build
  export LD_LIBRARY_PATH=$here/$1:/usr/local/cuda/lib64:/usr/local/cuda/lib HETCCL_CUDA_PLUGIN=$here/$1/libhetccl-cuda.so
  bin=$here/$1
}
step() {  # step NAME LIMIT CMD...: runs, logs to $o/NAME.log, one line in summary.txt
  local name=$1 limit=$2
  shift 2
  local t0 rc
  t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$o/$name.log" 2>&1
  rc=$?
  printf '%-28s rc=%-3s %6.1f s  %s\n' "$name" "$rc" "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{print a-b}')" "$*" | tee -a "$o/summary.txt"
  grep -E "OK|FAIL|SKIPPED|PASSED|FAILED|error|Error" "$o/$name.log" | grep -v "^#" | head -8
}
{ date -u; nvidia-smi; nvidia-smi --query-gpu=name,driver_version --format=csv; uname -a; /usr/local/cuda/bin/nvcc --version
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  echo "HETCCL_NCCL_LIB=$nccl"; } >"$o/machine.txt" 2>&1

run_step() {
  case $1 in
    abi) use new; step plugin_abi_and_flags 90 "$bin/gpu_runtime_test" --gtest_filter='GpuPluginAbiTest.*:*Flag*' ;;
    pipeline_small) use new; step graph_pipeline_4KiB 120 "$bin/hetccl-run" -n 2 --domains 2 --timeout 110 -- "$bin/graph_check" --count 1000 ;;
    pipeline) use new; step graph_pipeline_12MiB 150 "$bin/hetccl-run" -n 2 --domains 2 --timeout 140 -- "$bin/graph_check" --count 3000001 ;;
    staged) use new; HETCCL_GPU_EXEC=staged step graph_staged_refuses 90 "$bin/hetccl-run" -n 2 --domains 2 --timeout 80 -- "$bin/graph_check" --expect refuse --count 100000 ;;
    vendor) use new; step graph_vendor_1rank 90 "$bin/hetccl-run" -n 1 --timeout 80 -- "$bin/graph_check" --count 3000001 ;;
    mismatch) use new; step mismatched_count 60 "$bin/hetccl-run" -n 2 --domains 2 --timeout 55 -- "$bin/mismatch_check_gpu" ;;
    semantics) use new; step stream_semantics 60 "$bin/hetccl-run" -n 2 --domains 2 --timeout 55 -- "$bin/stream_semantics" ;;
    collcheck) use new; step coll_check_2x1 200 "$bin/hetccl-run" -n 2 --domains 2 --timeout 190 -- "$bin/coll_check_gpu" --sizes 0,1,7,65537,3000001 --types float32,bfloat16,int8 ;;
    torch) use new; RANK_DOMAINS=2 RANK_PRELOAD=$bin/libnccl.so.2 step torch_graph_allreduce 150 torchrun --standalone --nproc_per_node 2 --no_python bash "$here/rank_env.sh" python3 "$here/graph_allreduce.py" ;;
    perf)  # old vs new, interleaved (2 ranks on one GPU: not performance evidence, see README)
      for round in 1 2; do for v in old new; do
        use $v; step "perf_${v}_${round}" 100 "$bin/hetccl-run" -n 2 --domains 2 --timeout 95 -- "$bin/hetccl-perf" all_reduce -G -b 1M -e 256M -f 4 -n 10 -w 3
      done; done ;;
  esac
}
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(abi pipeline_small mismatch staged vendor pipeline semantics perf torch collcheck)
for s in "${steps[@]}"; do run_step "$s"; done
echo "== summary"; cat "$o/summary.txt"
