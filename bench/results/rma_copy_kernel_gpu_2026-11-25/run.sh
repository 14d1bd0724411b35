#!/usr/bin/env bash
# Batched device-to-device copies as one kernel over the range list (CUDA plugin, copy_batch.cc) on one GPU:
# the package's GPU and RMA tests through the IPC path (two ranks on GPU 0, separate domains), among them
# test_rma_batches_of_unaligned_ranges_are_exact; that test with a plugin whose kernel drops each share's
# unaligned tail (.dev/notail: must fail); the KV example (8192 ranges) exact; the KV benchmark in one run
# with the kernel, without it (.dev/nokernel: cudaMemcpyBatchAsync, the previous plugin) and through the
# window (HETCCL_RMA_IPC=off). Both ranks share the one GPU. Run from the repository root, build in .dev/build.
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
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; nproc; $PY -c "import torch; print('torch', torch.__version__)"; } > $o/machine.txt 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout -k 5 $lim "$@" > $o/$n.log 2>&1; echo "$n rc=$? $((SECONDS-t0)) s: $*" | tee -a $o/summary.txt; }
t pytest_rma 240 $run -n 2 --domains 2 -p --timeout 235 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py python/tests/test_rma.py
grep -E "passed|failed" $o/pytest_rma.log | tail -3 >> $o/summary.txt
HETCCL_TIMEOUT=20 HETCCL_CUDA_PLUGIN=$PWD/.dev/notail/libhetccl-cuda.so t pytest_mutant_notail 150 $run -n 2 --domains 2 -p --timeout 145 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py -k "unaligned"
grep -E "passed|failed|wrong bytes" $o/pytest_mutant_notail.log | head -6 >> $o/summary.txt
t ex_kv_cuda 90 $run -n 2 --domains 2 -p --timeout 85 -- $PY examples/kv_transfer.py --device cuda --layers 32 --blocks 1024 --heads 8 --head-dim 128 --pull 256
tail -3 $o/ex_kv_cuda.log >> $o/summary.txt
t kv_cuda_kernel 150 $run -n 2 --domains 2 --timeout 145 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_kernel.md --json $o/kv_cuda_kernel.json
HETCCL_CUDA_PLUGIN=$PWD/.dev/nokernel/libhetccl-cuda.so t kv_cuda_nokernel 150 $run -n 2 --domains 2 --timeout 145 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_nokernel.md
HETCCL_RMA_IPC=off t kv_cuda_window 150 $run -n 2 --domains 2 --timeout 145 -- $PY bench/kv_transfer_bench.py --device cuda --torch none --sizes 1,4,16,64,256 --md $o/kv_cuda_window.md
grep -hE "^\| [0-9]|Goal 1" $o/kv_cuda_kernel.md $o/kv_cuda_nokernel.md $o/kv_cuda_window.md >> $o/summary.txt 2>/dev/null
tar czf $o/logs.tar.gz -C $o $(cd $o && ls *.log) && rm -f $o/*.log
cat $o/summary.txt
