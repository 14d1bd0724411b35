#!/usr/bin/env bash
# One device call on one GPU (both processes/ranks on GPU 0), from the repository root with the builds
# carried in devbin-before (the library before the RMA window pipelining) and devbin-agent (after it, with
# the agents' IPC path, the CUDA plugin, hetccl-run, the GPU checks and agent_kv_bench):
#   1. agents: one prepared read of N blocks (x32 layers, 256 KiB each), copied device to device by the
#      target (HETCCL_AGENT_IPC=auto) vs through the windows (off), interleaved, 2 rounds;
#   2. the communicator RMA's window (kv_transfer_bench.py, 2 ranks in 2 domains, HETCCL_RMA_IPC=off so the
#      window serves): the library before and after the pipelining, interleaved, 2 rounds;
#   3. with CHECKS=1: GPU correctness checks with the stream pipeline's batched operations (graph capture,
#      mismatched counts, every collective on 2 domains).
set -uo pipefail
o=${OUT:?}
root=$PWD
R=$root/devbin-agent/hetccl-run
export NCCL_NVLS_ENABLE=0 HETCCL_CUDA_PLUGIN=$root/devbin-agent/libhetccl-cuda.so HETCCL_TIMEOUT=120
export PYTHONPATH=$root/python PYTHONDONTWRITEBYTECODE=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; python3 -c "import torch; print('torch', torch.__version__)"; } >"$o/machine.txt" 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout -k 5 "$lim" "$@" >"$o/$n.log" 2>&1; echo "$n rc=$? $((SECONDS - t0)) s: $*" | tee -a "$o/summary.txt"; }
geo=(--device cuda --gpu-prefill 0 --gpu-decode 0 --layers 32 --block-bytes 262144 --cache-blocks 512 --blocks 1,16,256 --reps 5)
for round in 1 2; do
  for v in ipc window; do
    mode=auto; [[ $v == window ]] && mode=off
    LD_LIBRARY_PATH=$root/devbin-agent HETCCL_AGENT_IPC=$mode t agent_${v}_$round 100 "$root/devbin-agent/agent_kv_bench" "${geo[@]}"
  done
done
for round in 1 2; do
  for v in before agent; do
    LD_LIBRARY_PATH=$root/devbin-$v HETCCL_LIBRARY=$root/devbin-$v/libhetccl.so HETCCL_RMA_IPC=off \
      t rma_${v}_$round 120 "$R" -n 2 --domains 2 --timeout 110 -- python3 bench/kv_transfer_bench.py --device cuda --torch none \
      --sizes 1,16,256 --reps 10 --md "$o/rma_${v}_$round.md"
  done
done
if [[ ${CHECKS:-0} == 1 ]]; then
  export HETCCL_DEVICE=cuda LD_LIBRARY_PATH=$root/devbin-agent
  B=$root/devbin-agent
  t gpu_graph_pipeline 90 "$R" -n 2 --domains 2 --timeout 85 -- "$B/graph_check"
  t gpu_mismatched_count 60 "$R" -n 2 --domains 2 --timeout 55 -- "$B/mismatch_check_gpu"
  t gpu_mp_2x1 100 "$R" -n 2 --domains 2 --timeout 95 -- "$B/coll_check_gpu"
fi
grep -h "^| cuda" "$o"/agent_*.log >>"$o/summary.txt"
grep -hE "^\| [0-9]" "$o"/rma_*.md >>"$o/summary.txt" 2>/dev/null
cat "$o/summary.txt"
