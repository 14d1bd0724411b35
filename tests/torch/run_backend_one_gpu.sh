#!/usr/bin/env bash
# run_backend_one_gpu.sh LIB_DIR : training through the torch.distributed backend "hetccl" (python/hetccl/
# torch_backend.py, not the drop-in) on a machine with ONE GPU, against a one-rank reference. Several ranks
# share GPU 0, each in a domain of its own (HETCCL_DOMAIN, via rank_env.sh's RANK_DOMAINS), so nothing
# vendor-specific connects them: every collective crosses domains through hetccl's stream pipeline. NCCL
# cannot run this job (two ranks of one NCCL communicator on one GPU); the reference is the same program as
# one rank (backend "nccl", world 1) over the same global batch. A correctness check, not a benchmark (the
# ranks time-slice one GPU).
#   FSDP2 (fully_shard, reduce-scatter + all-gather) and DDP, float64 with SGD: losses within 1e-6 of the
#   reference (float64 keeps another rank count's rounding order far below it; SGD makes a gradient off by
#   a constant factor visible, which AdamW would hide); FSDP2 float32 with AdamW (the default): within 1e-2.
# LIB_DIR holds libhetccl.so and libhetccl-cuda.so. Environment: PYTHON (python3), OUT (results), STEPS (30).
# Prints PASS/FAIL per step; exit status 1 when any failed.
DEFAULT_OUT=backend-one-gpu
source "$(dirname "$0")/backend_runs.sh"
f64=(--dtype float64 --optimizer sgd --steps "$steps")
step ref_fsdp64 300 launch 1 nccl "" fsdp_train.py "${f64[@]}" --loss-file ref_fsdp64.txt
step ref_ddp64 300 launch 1 nccl "" ddp_train.py "${f64[@]}" --loss-file ref_ddp64.txt
step ref_fsdp32 300 launch 1 nccl "" fsdp_train.py --steps "$steps" --loss-file ref_fsdp32.txt
for n in 2 4; do
  step "hetccl${n}_fsdp64" 600 launch $n hetccl $n fsdp_train.py "${f64[@]}" --loss-file "hetccl${n}_fsdp64.txt"
  compare "compare${n}_fsdp64" ref_fsdp64 "hetccl${n}_fsdp64" 1e-6
done
step hetccl2_ddp64 600 launch 2 hetccl 2 ddp_train.py "${f64[@]}" --loss-file hetccl2_ddp64.txt
compare compare2_ddp64 ref_ddp64 hetccl2_ddp64 1e-6
step hetccl2_fsdp32 600 launch 2 hetccl 2 fsdp_train.py --steps "$steps" --loss-file hetccl2_fsdp32.txt
compare compare2_fsdp32 ref_fsdp32 hetccl2_fsdp32 1e-2
exit $failed
