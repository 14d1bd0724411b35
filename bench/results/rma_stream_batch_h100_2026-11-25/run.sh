#!/usr/bin/env bash
# Stream-ordered RMA (single and batch forms) on torch CUDA tensors, first run on a real GPU: the package's
# GPU and RMA tests with two ranks on GPU 0 in two domains (the RMA window over shm), then as two hosts
# (device memory staged through pinned host memory over tcp). Run from the repository root on the device
# machine with a hetccl build (CUDA plugin) in .dev/build:
#   OUT=$OUT bash bench/results/rma_stream_batch_h100_2026-11-25/run.sh
set -uo pipefail
B=$PWD/.dev/build
PY=/opt/torch/.venv/bin/python3
export PYTHONPATH=$PWD/python HETCCL_LIBRARY=$B/libhetccl.so PYTHONDONTWRITEBYTECODE=1 HETCCL_TIMEOUT=120 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_CUDA_PLUGIN=$B/libhetccl-cuda.so
export HETCCL_NCCL_LIB=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 | head -1)
run=$B/tools/hetccl-run
o=${OUT:-./out}; mkdir -p $o
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; $PY -c 'import torch; print("torch", torch.__version__)'; git describe --always --dirty 2>/dev/null; } > $o/machine.txt 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout -k 5 $lim "$@" > $o/$n.log 2>&1; echo "$n rc=$? $((SECONDS-t0)) s: $*" | tee -a $o/summary.txt; grep -E "passed|failed" $o/$n.log | tail -2 | tee -a $o/summary.txt; }
tests="python/tests/test_gpu_torch.py python/tests/test_rma.py"
HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT t pytest_window 200 $run -n 2 --domains 2 -p --timeout 190 -- $PY -m pytest -q -p no:cacheprovider $tests
grep -h "rma to rank" $o/pytest_window.log | head -2 >> $o/summary.txt
HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT HETCCL_UCX=off t pytest_hosts_tcp 200 $run -n 2 --domains 2 --host-ids 2 -p --timeout 190 -- $PY -m pytest -q -p no:cacheprovider $tests
grep -h "rma to rank" $o/pytest_hosts_tcp.log | head -2 >> $o/summary.txt
tar czf $o/logs.tar.gz -C $o $(cd $o && ls *.log) && rm -f $o/*.log
cat $o/summary.txt
