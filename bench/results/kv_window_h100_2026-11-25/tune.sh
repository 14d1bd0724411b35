#!/usr/bin/env bash
set -uo pipefail
B=$PWD/.dev/build
mkdir -p /work/main && ln -sfn "$B" /work/main/build
for l in libhetccl.so.0 libhetccl.so; do [[ -e $B/$l ]] || ln -s libhetccl.so.0.1.0 "$B/$l"; done
PY=/opt/torch/.venv/bin/python3
export PYTHONPATH=$PWD/python HETCCL_LIBRARY=$B/libhetccl.so PYTHONDONTWRITEBYTECODE=1 HETCCL_TIMEOUT=120 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_CUDA_PLUGIN=$B/libhetccl-cuda.so
run=$B/tools/hetccl-run
for cfg in "4 4M" "8 4M" "4 16M" "8 16M" "2 64M"; do
  set -- $cfg
  HETCCL_RMA_WINDOW_SLOTS=$1 HETCCL_RMA_WINDOW_BYTES=$2 timeout 100 $run -n 2 --domains 2 --timeout 95 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 64,256 --overhead-calls 10 --md $OUT/t.md > $OUT/t.log 2>&1
  echo "slots=$1 bytes=$2 rc=$?"; grep -E "^\| (64|256) " $OUT/t.md
done
