#!/usr/bin/env bash
# torch.distributed backend "hetccl" on 2 GPUs (bench/gpu/torch_backend_gpu.py), with carried binaries.
D=$(cd "$(dirname "$0")" && pwd); S=$(cd "$D/.." && pwd)
export LD_LIBRARY_PATH=$D:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0
export HETCCL_LIBRARY=$D/libhetccl.so HETCCL_CUDA_PLUGIN=$D/libhetccl-cuda.so HETCCL_TIMEOUT=60 PYTHONPATH=$S/python
PY=$(command -v python3)
{ nvidia-smi -L; $PY -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
step() { local name=$1 limit=$2; shift 2; local s=$(date +%s); timeout -k 5 "$limit" "$@" > "$OUT/$name.txt" 2>&1; local rc=$?; echo "$name rc=$rc $(( $(date +%s) - s ))s"; grep -E "PASS|FAIL|step:|Error|error" "$OUT/$name.txt" | head -8; }
if [ -z "${PROBE:-}" ]; then
step gpu 240 $PY -m torch.distributed.run --nproc-per-node 2 "$S/bench/gpu/torch_backend_gpu.py" gpu --out "$OUT"
step mixed 120 $PY -m torch.distributed.run --nproc-per-node 2 "$S/bench/gpu/torch_backend_gpu.py" mixed --out "$OUT"
if $PY -c 'import pytest, numpy' 2>/dev/null; then
  step pytest_cpu_torch 150 env HETCCL_DEVICE=host "$D/tools/hetccl-run" -n 2 -- $PY -m pytest -q -x -p no:cacheprovider "$S/python/tests/test_torch_backend.py"
  tail -5 "$OUT/pytest_cpu_torch.txt"
else echo "no pytest/numpy on this machine: the CPU conformance tests did not run"; fi
fi
if [ -n "${PROBE:-}" ]; then
  step probe_profile 120 env PROBE_PROFILE=1 $PY -m torch.distributed.run --nproc-per-node 2 "$S/bench/gpu/torch_backend_probe.py"
  grep -E " B  " "$OUT/probe_profile.txt"; grep -A30 "Ordered by" "$OUT/probe_profile.txt" | head -30
fi
