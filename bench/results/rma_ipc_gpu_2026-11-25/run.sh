#!/usr/bin/env bash
# RMA device to device through IPC mappings (HETCCL_RMA_IPC) on one GPU (H100 or H200, machine.txt says): the paths, the package's GPU and RMA
# tests on torch CUDA tensors, the same tests with a library whose target answers before its copies complete
# (must fail), the KV example, and the KV benchmark with CUDA ranks, IPC vs the window (HETCCL_RMA_IPC=off) in
# one run, and a library whose copies go one cudaMemcpyAsync per range instead of one batch (.dev/nobatch). Both ranks share the one GPU (separate domains): the copies of one rank run while the other waits.
# Run from the repository root with the build carried in .dev/build and the mutant in .dev/mutant_nowait
# (the mutant: HETCCL_TIMEOUT=20, so that the rank whose check passed does not wait out the run's limit in
# the test's closing barrier after its peer failed).
set -uo pipefail
B=$PWD/.dev/build
mkdir -p /work/main && ln -sfn "$B" /work/main/build
for l in libhetccl.so.0 libhetccl.so; do [[ -e $B/$l ]] || ln -s libhetccl.so.0.1.0 "$B/$l"; done
M=$PWD/.dev/mutant_nowait
for l in libhetccl.so.0 libhetccl.so; do [[ -e $M/$l ]] || ln -s libhetccl.so.0.1.0 "$M/$l"; done
PY=/opt/torch/.venv/bin/python3
export PYTHONPATH=$PWD/python HETCCL_LIBRARY=$B/libhetccl.so PYTHONDONTWRITEBYTECODE=1 HETCCL_TIMEOUT=120 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_CUDA_PLUGIN=$B/libhetccl-cuda.so
export HETCCL_NCCL_LIB=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 | head -1)
run=$B/tools/hetccl-run
o=$OUT
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; nproc; $PY -c "import torch; print('torch', torch.__version__)"; } > $o/machine.txt 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout -k 5 $lim "$@" > $o/$n.log 2>&1; echo "$n rc=$? $((SECONDS-t0)) s: $*" | tee -a $o/summary.txt; }
HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT t paths 60 $run -n 2 --domains 2 --timeout 55 -- $PY examples/kv_transfer.py --device cuda --layers 4 --blocks 64 --heads 8 --head-dim 128 --pull 16
grep -h "rma to rank\|share\|map rank" $o/paths.log | head -4 >> $o/summary.txt
t info_comm 60 $run -n 2 --domains 2 --timeout 55 -- $B/tools/hetccl-info --comm
grep -A3 "^rank" $o/info_comm.log >> $o/summary.txt
t pytest_rma 170 $run -n 2 --domains 2 -p --timeout 165 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py python/tests/test_rma.py
grep -E "passed|failed" $o/pytest_rma.log | tail -3 >> $o/summary.txt
HETCCL_TIMEOUT=20 HETCCL_LIBRARY=$M/libhetccl.so LD_LIBRARY_PATH=$M:$LD_LIBRARY_PATH t pytest_mutant_nowait 120 $run -n 2 --domains 2 -p --timeout 115 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py -k "rma"
grep -E "passed|failed|wrong bytes|Error|assert" $o/pytest_mutant_nowait.log | head -12 >> $o/summary.txt
t ex_kv_cuda 90 $run -n 2 --domains 2 -p --timeout 85 -- $PY examples/kv_transfer.py --device cuda --layers 32 --blocks 1024 --heads 8 --head-dim 128 --pull 256
tail -3 $o/ex_kv_cuda.log >> $o/summary.txt
t kv_cuda_ipc 150 $run -n 2 --domains 2 --timeout 145 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_ipc.md --json $o/kv_cuda_ipc.json
N=$PWD/.dev/nobatch
for l in libhetccl.so.0 libhetccl.so; do [[ -e $N/$l ]] || ln -s libhetccl.so.0.1.0 "$N/$l"; done
HETCCL_LIBRARY=$N/libhetccl.so LD_LIBRARY_PATH=$N:$LD_LIBRARY_PATH t kv_cuda_ipc_nobatch 150 $run -n 2 --domains 2 --timeout 145 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_ipc_nobatch.md
HETCCL_RMA_IPC=off t kv_cuda_window 150 $run -n 2 --domains 2 --timeout 145 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_window.md
grep -hE "^\| [0-9]|Goal 1" $o/kv_cuda_ipc.md $o/kv_cuda_ipc_nobatch.md $o/kv_cuda_window.md >> $o/summary.txt 2>/dev/null
tar czf $o/logs.tar.gz -C $o $(cd $o && ls *.log) && rm -f $o/*.log
cat $o/summary.txt
