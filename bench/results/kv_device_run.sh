#!/usr/bin/env bash
# Issue 16 on one GPU machine (one H100): the Python package on torch CUDA tensors, the two examples with
# --device cuda, and the KV-block transfer benchmark (bench/kv_transfer_bench.py) with CUDA ranks and with CPU
# ranks (the real CPU numbers of that machine). One command, under 9 minutes (a deadline; each step gets
# at most what is left):
#
#   bash bench/results/kv_device_run.sh              # from the repository root; hetccl built in ./build
#                                                    # (carried) or /work/main/build, with libhetccl-cuda.so
#   DRY_RUN_CPU=1 PY=python3 B=build-kv bash bench/results/kv_device_run.sh   # no GPU: the CPU steps only
#
# Steps (each logged to $OUT/<step>.log, one line per step in $OUT/summary.txt):
#   machine            nvidia-smi, lscpu, free, torch/numpy/pytest versions, hetccl-info
#   pytest_gpu_torch   python/tests/test_gpu_torch.py (+ test_rma.py) on 2 ranks in 2 domains sharing the GPU,
#                      PYTHONPATH=python, HETCCL_LIBRARY=$B/libhetccl.so (no pip); per-rank summaries
#   ex_kv_cuda         examples/kv_transfer.py --device cuda, 2 ranks, 2 domains (7B-like: 32 layers, 1024 blocks)
#   ex_moe_cuda        examples/moe_alltoall.py --device cuda, 4 ranks, 2 domains
#   kv_cuda            the benchmark, CUDA ranks (both on the one GPU: separate domains; NOT performance
#                      evidence -- the header says so), 7B layout, 1..1024 blocks, torch gloo baseline
#                      (retried with --torch none if it fails)
#   kv_cpu_shm         the benchmark, CPU ranks, one host (shm RMA links), 7B layout, 1024-block cache
#   kv_cpu_tcp         the same as two hosts (--host-ids 2: tcp), 256-block cache
# Output: $OUT/summary.txt, $OUT/machine.txt, $OUT/*.log, $OUT/kv_*.md and kv_*.json.
set -uo pipefail
repo=$PWD
o=${OUT:-/tmp/kv-device-out}
mkdir -p "$o"
: >"$o/summary.txt"
deadline=$((SECONDS + ${DEADLINE_S:-530}))
dry=${DRY_RUN_CPU:-0}
# the build: $B, else ./build (carried), else /work/main/build
if [[ -z ${B:-} ]]; then
  if [[ -e $repo/build/libhetccl.so.0.1.0 ]]; then B=$repo/build; else B=/work/main/build; fi
fi
B=$(cd "$B" && pwd)
if [[ $dry != 1 && $B != /work/main/build && ! -e /work/main/build ]]; then  # the name the run.sh files use
  mkdir -p /work/main && ln -sfn "$B" /work/main/build
fi
for l in libhetccl.so.0 libhetccl.so; do [[ -e $B/$l ]] || ln -s libhetccl.so.0.1.0 "$B/$l"; done
PY=${PY:-/opt/torch/.venv/bin/python3}
export PYTHONPATH=$repo/python${PYTHONPATH:+:$PYTHONPATH} HETCCL_LIBRARY=$B/libhetccl.so PYTHONDONTWRITEBYTECODE=1
export HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120} NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [[ $dry != 1 ]]; then
  export HETCCL_CUDA_PLUGIN=$B/libhetccl-cuda.so
  nccl=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1)
  [[ -n $nccl ]] && export HETCCL_NCCL_LIB=$nccl
fi
run=$B/tools/hetccl-run

step() {  # step NAME LIMIT CMD...: runs CMD with at most min(LIMIT, time left) seconds
  local name=$1 limit=$2 t0=$SECONDS rc left
  shift 2
  left=$((deadline - SECONDS))
  if ((left < 20)); then
    printf '%-18s SKIPPED (%d s left of the 9-minute budget)  %s\n' "$name" "$left" "$*" | tee -a "$o/summary.txt"
    return 99
  fi
  ((limit > left)) && limit=$left
  timeout -k 5 "$limit" "$@" >"$o/$name.log" 2>&1
  rc=$?
  printf '%-18s rc=%-3s %4d s (limit %d)  %s\n' "$name" "$rc" "$((SECONDS - t0))" "$limit" "$*" | tee -a "$o/summary.txt"
  return $rc
}

# ---- machine and versions ----
{ date -u; uname -a; lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)"; free -g
  if [[ $dry != 1 ]]; then nvidia-smi; fi
  echo "PY=$PY"; "$PY" -V
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")' 2>&1 | tail -1
  "$PY" -c 'import numpy; print("numpy", numpy.__version__)' 2>&1 | tail -1
  "$PY" -c 'import pytest; print("pytest", pytest.__version__)' 2>&1 | tail -1
  "$PY" -c 'import hetccl; print("hetccl", hetccl.version(), hetccl.library_path(), "rma", hetccl.rma_available())' 2>&1 | tail -1
  echo "build: $B"; ls -la "$B"/libhetccl*.so* 2>&1
  echo "HETCCL_CUDA_PLUGIN=${HETCCL_CUDA_PLUGIN:-} HETCCL_NCCL_LIB=${HETCCL_NCCL_LIB:-}"
  git -C "$repo" describe --always --dirty 2>/dev/null || true
  "$B/tools/hetccl-info" 2>&1 | head -40 || true; } >"$o/machine.txt" 2>&1
grep -E "^(torch|numpy|pytest|hetccl) " "$o/machine.txt" | sed 's/^/  /' >>"$o/summary.txt"

if [[ $dry != 1 ]]; then
  # ---- the package's tests on torch CUDA tensors: 2 ranks, 2 domains, one GPU ----
  mkdir -p "$o/pytest-summary"
  HETCCL_PYTEST_SUMMARY_DIR=$o/pytest-summary step pytest_gpu_torch 150 \
    "$run" -n 2 --domains 2 -p --timeout 145 -- "$PY" -m pytest -q -p no:cacheprovider -rs \
    python/tests/test_gpu_torch.py python/tests/test_rma.py
  "$PY" -c 'import pytest' 2>/dev/null || echo "  NOTE: $PY cannot import pytest: pytest_gpu_torch cannot run" >>"$o/summary.txt"
  for f in "$o"/pytest-summary/rank*.json; do [[ -e $f ]] && echo "  $(basename "$f"): $(cat "$f")" >>"$o/summary.txt"; done
  grep -E "passed|failed|error" "$o/pytest_gpu_torch.log" | tail -4 | sed 's/^/  /' >>"$o/summary.txt"

  # ---- the examples on CUDA tensors ----
  step ex_kv_cuda 90 "$run" -n 2 --domains 2 -p --timeout 85 -- "$PY" examples/kv_transfer.py --device cuda \
    --layers 32 --blocks 1024 --heads 8 --head-dim 128 --pull 256
  tail -3 "$o/ex_kv_cuda.log" | sed 's/^/  /' >>"$o/summary.txt"
  step ex_moe_cuda 90 "$run" -n 4 --domains 2 -p --timeout 85 -- "$PY" examples/moe_alltoall.py --device cuda \
    --hidden 4096 --max-tokens 2048
  tail -4 "$o/ex_moe_cuda.log" | sed 's/^/  /' >>"$o/summary.txt"

  # ---- the KV benchmark, CUDA ranks (one GPU shared: correctness + the copy ceilings of this GPU) ----
  if ! step kv_cuda 170 "$run" -n 2 --domains 2 --timeout 165 -- "$PY" bench/kv_transfer_bench.py --device cuda \
      --json "$o/kv_cuda.json" --md "$o/kv_cuda.md"; then
    step kv_cuda_notorch 120 "$run" -n 2 --domains 2 --timeout 115 -- "$PY" bench/kv_transfer_bench.py \
      --device cuda --torch none --json "$o/kv_cuda_notorch.json" --md "$o/kv_cuda_notorch.md"
  fi
  grep -E "WARNING|^\| [0-9]|Goal" "$o"/kv_cuda*.md 2>/dev/null | sed 's/^/  /' >>"$o/summary.txt"
fi

# ---- the KV benchmark, CPU ranks of this machine ----
if ! "$PY" -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "  NOTE: $PY has no numpy: the CPU runs use /usr/bin/python3 (no torch baseline there)" >>"$o/summary.txt"
  PY=/usr/bin/python3
fi
cpu_args=(--device cpu --heads 32 --min-reps 3 --warmup 1 --budget-mb 2048)
[[ $dry == 1 ]] && cpu_args+=(--blocks 64 --sizes 1,16,64) || cpu_args+=(--blocks 1024)
step kv_cpu_shm 170 "$run" -n 2 --timeout 165 -- "$PY" bench/kv_transfer_bench.py "${cpu_args[@]}" \
  --json "$o/kv_cpu_shm.json" --md "$o/kv_cpu_shm.md"
grep -E "^\| [0-9]|Goal" "$o/kv_cpu_shm.md" 2>/dev/null | sed 's/^/  /' >>"$o/summary.txt"
tcp_args=(--device cpu --heads 32 --min-reps 3 --warmup 1 --budget-mb 2048 --blocks 256)
[[ $dry == 1 ]] && tcp_args=(--device cpu --heads 32 --min-reps 3 --warmup 1 --blocks 64 --sizes 1,16,64)
step kv_cpu_tcp 170 "$run" -n 2 --host-ids 2 --timeout 165 -- "$PY" bench/kv_transfer_bench.py "${tcp_args[@]}" \
  --json "$o/kv_cpu_tcp.json" --md "$o/kv_cpu_tcp.md"
grep -E "^\| [0-9]|Goal" "$o/kv_cpu_tcp.md" 2>/dev/null | sed 's/^/  /' >>"$o/summary.txt"
echo "total $SECONDS s" >>"$o/summary.txt"
cat "$o/summary.txt"
