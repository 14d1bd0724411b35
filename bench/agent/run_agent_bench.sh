#!/usr/bin/env bash
# Agent KV-read benchmark on a GPU machine (issue 29): bench/agent/agent_kv_bench.cu in every variant, one
# command, results in $OUT (one .md per variant + machine.txt + summary.txt).
#   BIN=devbin-agent bash bench/agent/run_agent_bench.sh      # BIN: agent_kv_bench + libhetccl.so.0 + libhetccl-cuda.so
# Variants: CUDA memory prefill GPU 0 -> decode GPU 1 (when there are 2 GPUs) and GPU 0 -> GPU 0, copied device
# to device by the target (HETCCL_AGENT_IPC=auto, the default), through the shared-memory windows
# (HETCCL_AGENT_IPC=off) and over tcp (HETCCL_AGENT_WINDOW=off too), ipc and window interleaved twice; host
# memory both ways.
set -uo pipefail
BIN=${BIN:-devbin-agent}
o=${OUT:-/tmp/agent-bench-out}
mkdir -p "$o"
: >"$o/summary.txt"
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; lscpu | grep -E 'Model name|^CPU\(s\)'; free -g | head -2; uname -r; } >"$o/machine.txt" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
geo="--layers 32 --block-bytes 262144 --cache-blocks 512 --blocks 1,4,16,64,256 --reps 10"
run() {  # name env... -- args
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local t0=$SECONDS
  env "${envs[@]}" timeout 240 "$BIN/agent_kv_bench" "$@" >"$o/$name.md" 2>"$o/$name.err"
  echo "$name rc=$? $((SECONDS - t0)) s: ${envs[*]} agent_kv_bench $*" >>"$o/summary.txt"
}
pairs="0:0"
((ngpu >= 2)) && pairs="0:1 0:0"
for pair in $pairs; do
  p=${pair%:*} d=${pair#*:}
  for round in 1 2; do
    run cuda_gpu${p}_gpu${d}_ipc_$round HETCCL_AGENT_IPC=auto -- --device cuda --gpu-prefill $p --gpu-decode $d $geo
    run cuda_gpu${p}_gpu${d}_window_$round HETCCL_AGENT_IPC=off -- --device cuda --gpu-prefill $p --gpu-decode $d $geo
  done
  run cuda_gpu${p}_gpu${d}_tcp HETCCL_AGENT_IPC=off HETCCL_AGENT_WINDOW=off -- --device cuda --gpu-prefill $p --gpu-decode $d $geo
done
run host_window NCCL_NVLS_ENABLE=0 -- --device host --layers 32 --block-bytes 262144 --cache-blocks 512 --blocks 1,16,256 --reps 5
run host_tcp HETCCL_AGENT_WINDOW=off -- --device host --layers 32 --block-bytes 262144 --cache-blocks 512 --blocks 1,16,256 --reps 5
cat "$o/summary.txt"
for f in "$o"/*.md; do echo "== $f"; cat "$f"; tail -3 "${f%.md}.err"; done
