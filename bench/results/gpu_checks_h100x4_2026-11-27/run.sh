#!/usr/bin/env bash
# GPU checks of the final tree with carried binaries (the commands of tests/gpu/CMakeLists.txt's tests).
D=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$D:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0
export HETCCL_CUDA_PLUGIN=$D/libhetccl-cuda.so HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60
R=$D/tools/hetccl-run; T=$D/t; D_SRC=$(cd "$D/.." && pwd)
pass=0; fail=0
t() {  # t NAME [VAR=VAL...] -- ARGS
  local name=$1; shift; local vars=(); while [ "$1" != "--" ]; do vars+=("$1"); shift; done; shift
  local s=$(date +%s)
  if timeout 300 env "${vars[@]}" "$R" "$@" > "$OUT/$name.txt" 2>&1; then r=PASS; pass=$((pass+1)); else r="FAIL($?)"; fail=$((fail+1)); fi
  echo "$r $name $(( $(date +%s) - s ))s"
}
t gpu_mp_2x1 X=1 -- -n 2 --domains 2 --timeout 290 -- $T/coll_check_gpu
t gpu_mp_2x2 X=1 -- -n 4 --domains 2 --layout blocks --timeout 290 -- $T/coll_check_gpu --sizes 0,1,7,65537
t gpu_mp_2x2_large X=1 -- -n 4 --domains 2 --layout blocks --timeout 290 -- $T/coll_check_gpu --sizes 3000001 --types float32,bfloat16 --ops sum,avg
t gpu_mp_1domain X=1 -- -n 2 --timeout 290 -- $T/coll_check_gpu
t gpu_hier_vendor_3x1 HETCCL_ALGO=hier -- -n 3 --domains 3 --timeout 290 -- $T/coll_check_gpu --sizes 0,1,7,65537,3000001
t gpu_graph_pipeline X=1 -- -n 2 --domains 2 --timeout 290 -- $T/graph_check
t gpu_graph_2x2 X=1 -- -n 4 --domains 2 --layout blocks --timeout 290 -- $T/graph_check
t gpu_mismatched_count X=1 -- -n 2 --domains 2 --timeout 110 -- $T/mismatch_check_gpu
t gpu_pipeline_hosts_2x2 HETCCL_GPU_EXEC=pipeline HETCCL_UCX=off -- -n 4 --domains 2 --host-ids 2 --timeout 290 -- $T/coll_check_gpu --sizes 0,1,7,65537,3000001
t gpu_hier_vendor_hosts_2x2 HETCCL_UCX=off -- -n 4 --domains 2 --host-ids 2 --timeout 290 -- $T/coll_check_gpu --sizes 0,1,7,65537,3000001
t gpu_plus_cpu X=1 -- -n 2 --timeout 290 -- bash $D_SRC/tests/gpu/gpu_or_cpu_rank.sh $T/coll_check_gpu $T/coll_check
echo "passed $pass failed $fail"
