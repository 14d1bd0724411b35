#!/usr/bin/env bash
# Deregistration closes the peers' IPC mappings (Unmap / Unmapped), on a real GPU: the package's GPU and RMA
# tests on torch CUDA tensors through the IPC path (two ranks on GPU 0, separate domains), among them
# test_rma_deregistration_gives_the_memory_back (2 GiB sources put, deregistered, freed: the device's free
# memory must come back); then that test with a library that skips the unmap (.dev/mutant_nounmap), which
# must fail it. Correctness evidence, no timings. Run from the repository root with the build carried in
# .dev/build.
set -uo pipefail
B=$PWD/.dev/build
mkdir -p /work/main && ln -sfn "$B" /work/main/build
for l in libhetccl.so.0 libhetccl.so; do [[ -e $B/$l ]] || ln -s libhetccl.so.0.1.0 "$B/$l"; done
M=$PWD/.dev/mutant_nounmap
for l in libhetccl.so.0 libhetccl.so; do [[ -e $M/$l ]] || ln -s libhetccl.so.0.1.0 "$M/$l"; done
PY=/opt/torch/.venv/bin/python3
export PYTHONPATH=$PWD/python HETCCL_LIBRARY=$B/libhetccl.so PYTHONDONTWRITEBYTECODE=1 HETCCL_TIMEOUT=120 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_CUDA_PLUGIN=$B/libhetccl-cuda.so
export HETCCL_NCCL_LIB=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 | head -1)
run=$B/tools/hetccl-run
o=$OUT
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; lscpu | grep "Model name"; nproc; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > $o/machine.txt 2>&1
t() { local n=$1 lim=$2; shift 2; local t0=$SECONDS; timeout -k 5 $lim "$@" > $o/$n.log 2>&1; echo "$n rc=$? $((SECONDS-t0)) s: $*" | tee -a $o/summary.txt; }
HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT t pytest_rma 240 $run -n 2 --domains 2 -p --timeout 235 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py python/tests/test_rma.py
grep -h "rma to rank" $o/pytest_rma.log | sort -u | head -4 >> $o/summary.txt
grep -E "passed|failed" $o/pytest_rma.log | tail -3 >> $o/summary.txt
HETCCL_TIMEOUT=20 HETCCL_LIBRARY=$M/libhetccl.so LD_LIBRARY_PATH=$M:$LD_LIBRARY_PATH t pytest_mutant_nounmap 150 $run -n 2 --domains 2 -p --timeout 145 -- $PY -m pytest -q -p no:cacheprovider python/tests/test_gpu_torch.py -k "deregistration"
grep -E "passed|failed|GiB of the device|assert" $o/pytest_mutant_nounmap.log | head -8 >> $o/summary.txt
tar czf $o/logs.tar.gz -C $o $(cd $o && ls *.log) && rm -f $o/*.log
cat $o/summary.txt
