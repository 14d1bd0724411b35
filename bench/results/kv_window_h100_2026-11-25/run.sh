#!/usr/bin/env bash
# RMA window on the H100: KV benchmark with CUDA ranks (window auto vs off, same run), the KV example and
# the package's RMA tests on torch CUDA tensors through the window, then CPU ranks window on vs off.
set -uo pipefail
B=$PWD/.dev/build
mkdir -p /work/main && ln -sfn "$B" /work/main/build
for l in libhetccl.so.0 libhetccl.so; do [[ -e $B/$l ]] || ln -s libhetccl.so.0.1.0 "$B/$l"; done
PY=/opt/torch/.venv/bin/python3
export PYTHONPATH=$PWD/python HETCCL_LIBRARY=$B/libhetccl.so PYTHONDONTWRITEBYTECODE=1 HETCCL_TIMEOUT=120 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_CUDA_PLUGIN=$B/libhetccl-cuda.so
export HETCCL_NCCL_LIB=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 | head -1)
run=$B/tools/hetccl-run
o=$OUT
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; git describe --always --dirty 2>/dev/null; } > $o/machine.txt 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout -k 5 $lim "$@" > $o/$n.log 2>&1; echo "$n rc=$? $((SECONDS-t0)) s: $*" | tee -a $o/summary.txt; }
HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT t paths 60 $run -n 2 --domains 2 --timeout 55 -- $PY examples/kv_transfer.py --device cuda --layers 4 --blocks 64 --heads 8 --head-dim 128 --pull 16
grep -h "rma to rank" $o/paths.log | head -2 >> $o/summary.txt
t kv_cuda_window 170 $run -n 2 --domains 2 --timeout 165 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_window.md --json $o/kv_cuda_window.json
HETCCL_RMA_WINDOW=off t kv_cuda_off 170 $run -n 2 --domains 2 --timeout 165 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_off.md
HETCCL_RMA_WINDOW=off t ex_kv_cuda_off 90 $run -n 2 --domains 2 -p --timeout 85 -- $PY examples/kv_transfer.py --device cuda --layers 32 --blocks 1024 --heads 8 --head-dim 128 --pull 256
tail -2 $o/ex_kv_cuda_off.log >> $o/summary.txt
t ex_kv_cuda 90 $run -n 2 --domains 2 -p --timeout 85 -- $PY examples/kv_transfer.py --device cuda --layers 32 --blocks 1024 --heads 8 --head-dim 128 --pull 256
tail -3 $o/ex_kv_cuda.log >> $o/summary.txt
t pytest_rma 150 $run -n 2 --domains 2 -p --timeout 145 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py python/tests/test_rma.py
grep -E "passed|failed" $o/pytest_rma.log | tail -3 >> $o/summary.txt
grep -hE "^\| [0-9]|Goal" $o/kv_cuda_window.md $o/kv_cuda_off.md >> $o/summary.txt 2>/dev/null
cpu=(--device cpu --heads 32 --min-reps 3 --warmup 1 --budget-mb 2048 --blocks 256 --sizes 1,16,256 --torch none)
HETCCL_RMA_WINDOW=on t kv_cpu_window 120 $run -n 2 --timeout 115 -- $PY bench/kv_transfer_bench.py "${cpu[@]}" --md $o/kv_cpu_window.md
t kv_cpu_shm 120 $run -n 2 --timeout 115 -- $PY bench/kv_transfer_bench.py "${cpu[@]}" --md $o/kv_cpu_shm.md
grep -hE "^\| [0-9]|Goal" $o/kv_cpu_window.md $o/kv_cpu_shm.md >> $o/summary.txt 2>/dev/null
tar czf $o/logs.tar.gz -C $o $(cd $o && ls *.log) && rm -f $o/*.log
cat $o/summary.txt
