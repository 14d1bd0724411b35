#!/usr/bin/env bash
# The GPU ctests of the vendor inside domains between hosts (tests/gpu/CMakeLists.txt: gpu_hier_vendor_hosts_2x1,
# _2x2, gpu_graph_hier_vendor_hosts) and two of the pipeline-between-hosts ones, by hand on the device.
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HETCCL_DEVICE=cuda HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_UCX=off
run=$B/tools/hetccl-run; t=$B/tests/gpu; ep="bash tests/gpu/expect_device_path.sh"
step() { local name=$1; shift; local s=$(date +%s); timeout -k 10 290 "$@" > "$OUT/$name.txt" 2>&1; local rc=$?; echo "$name rc=$rc $(( $(date +%s) - s ))s"; grep -E "device calls: " "$OUT/$name.txt" | head -1 | cut -c1-300; tail -2 "$OUT/$name.txt"; }
P="inside each domain; rings to"
step gpu_hier_vendor_hosts_2x1 env HETCCL_ALGO=hier $ep "$P" $run -n 2 --domains 2 --host-ids 2 --timeout 280 -- $t/coll_check_gpu
step gpu_hier_vendor_hosts_2x2 $ep --min-gpus 4 "$P" $run -n 4 --domains 2 --host-ids 2 --timeout 280 -- $t/coll_check_gpu --sizes 0,1,7,65537,3000001
step gpu_hier_vendor_hosts_2x2_chunked env HETCCL_HIER_CHUNK_BYTES=256K HETCCL_GPU_MIN_CHUNK_BYTES=64K $ep --min-gpus 4 "$P" $run -n 4 --domains 2 --host-ids 2 --timeout 280 -- $t/coll_check_gpu --sizes 65537,3000001
step gpu_graph_hier_vendor_hosts env HETCCL_ALGO=hier $ep "$P" $run -n 2 --domains 2 --host-ids 2 --timeout 280 -- $t/graph_check
#step gpu_pipeline_hosts_2x2 env HETCCL_GPU_EXEC=pipeline $run -n 4 --domains 2 --host-ids 2 --timeout 280 -- $t/coll_check_gpu --sizes 0,1,7,65537,3000001
#step gpu_mismatched_count_hosts_auto env HETCCL_ALGO=hier $run -n 2 --domains 2 --host-ids 2 --timeout 110 -- $t/mismatch_check_gpu
