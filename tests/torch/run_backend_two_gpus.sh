#!/usr/bin/env bash
# run_backend_two_gpus.sh LIB_DIR : FSDP2 through the torch.distributed backend "hetccl" on 2 GPUs against
# backend "nccl" on the same 2 GPUs (one rank per GPU): hetccl with both ranks in one domain (every device
# call delegated to NCCL) and with a domain per GPU (the stream pipeline between them). float64 + SGD losses
# must agree within 1e-6 (same rank count, so only the reduction's rounding order can differ), float32 +
# AdamW within 1e-3. LIB_DIR holds libhetccl.so and libhetccl-cuda.so. Environment: PYTHON, OUT, STEPS (30)
# (backend_runs.sh). Prints PASS/FAIL per step; exit status 1 when any failed.
DEFAULT_OUT=backend-two-gpus
source "$(dirname "$0")/backend_runs.sh"
f64=(fsdp_train.py --dtype float64 --optimizer sgd --steps "$steps")
step nccl_fsdp64 300 launch 2 nccl "" "${f64[@]}" --loss-file nccl_fsdp64.txt
step nccl_fsdp32 300 launch 2 nccl "" fsdp_train.py --steps "$steps" --loss-file nccl_fsdp32.txt
step one_fsdp64 300 launch 2 hetccl "" "${f64[@]}" --loss-file one_fsdp64.txt
step two_fsdp64 300 launch 2 hetccl 2 "${f64[@]}" --loss-file two_fsdp64.txt
step two_fsdp32 300 launch 2 hetccl 2 fsdp_train.py --steps "$steps" --loss-file two_fsdp32.txt
compare compare_one_fsdp64 nccl_fsdp64 one_fsdp64 1e-6
compare compare_two_fsdp64 nccl_fsdp64 two_fsdp64 1e-6
compare compare_two_fsdp32 nccl_fsdp32 two_fsdp32 1e-3
exit $failed
