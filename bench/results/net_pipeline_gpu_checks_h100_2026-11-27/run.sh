#!/usr/bin/env bash
# The pipeline-between-hosts GPU checks (the commands of tests/gpu/CMakeLists.txt's gpu_*_hosts tests).
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_GPU_EXEC=pipeline HETCCL_UCX=off
run=$B/tools/hetccl-run; t=$B/tests/gpu
step() { local name=$1; shift; local s=$(date +%s); timeout -k 10 290 "$@" > "$OUT/$name.txt" 2>&1; local rc=$?; echo "$name rc=$rc $(( $(date +%s) - s ))s"; tail -4 "$OUT/$name.txt"; }
step gpu_pipeline_hosts_2x1 $run -n 2 --domains 2 --host-ids 2 --timeout 280 -- $t/coll_check_gpu
step gpu_pipeline_hosts_2x2 $run -n 4 --domains 2 --host-ids 2 --timeout 280 -- $t/coll_check_gpu --sizes 0,1,7,65537,3000001
step gpu_graph_pipeline_hosts $run -n 2 --domains 2 --host-ids 2 --timeout 280 -- $t/graph_check
step gpu_mismatched_count_hosts $run -n 2 --domains 2 --host-ids 2 --timeout 110 -- $t/mismatch_check_gpu
