#!/bin/bash
# float32 / float16 / bfloat16 all-reduce of device buffers: hetccl between two "hosts" (tcp, host staging in
# pieces, the AVX2/F16C kernels) against Gloo on CUDA tensors (torchrun, two processes on GPU 0), same run.
# Run from the repository root on the device machine with a build in .dev/build.
B=$PWD/.dev/build; PY=/opt/torch/.venv/bin/python3
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64 HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 HETCCL_UCX=off HETCCL_DEVICE=cuda
for r in 1 2; do
  for d in float bfloat16 half; do
    echo "== hetccl $d r$r: $(timeout 150 $B/tools/hetccl-run -n 2 --domains 2 --host-ids 2 --timeout 140 -- $B/tools/hetccl-perf all_reduce -G -d $d -b 16M -e 256M -f 4 -n 10 -w 3 -c 1 2>&1 | grep -E '^ +[0-9]+ ' | awk '{printf "%s %s/%s  ", $1, $8, $12}')"
    t=$d; [ $d = float ] && t=float32; [ $d = half ] && t=float16
    echo "== gloo $d r$r: $(timeout 200 $PY -m torch.distributed.run --standalone --nproc_per_node=2 bench/gpu/torch_colls.py --backend gloo --colls all_reduce --dtype $t -b 16M -e 256M -f 4 -n 10 -w 3 2>&1 | grep -E 'busbw|wrong|Error' | awk '{print $4, $11}' | tr '\n' ' ')"
  done
done
