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
set -uo pipefail
lib=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
out=${OUT:-$PWD/backend-one-gpu}
mkdir -p "$out"
steps=${STEPS:-30}
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_LIBRARY=$lib/libhetccl.so \
  HETCCL_CUDA_PLUGIN=$lib/libhetccl-cuda.so PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} \
  NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120} PYTHONUNBUFFERED=1 OUT_DIR=$out
failed=0
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2 start=$SECONDS rc verdict=PASS
  shift 2
  timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" >"$out/$name.log" 2>&1
  rc=$?
  [[ $rc -eq 0 ]] || { verdict=FAIL; failed=1; tail -n 6 "$out/$name.log"; }
  printf '%s %-22s rc=%-3s %4ss  %s\n' "$verdict" "$name" "$rc" "$((SECONDS - start))" "$(grep -m1 -E 'steps, loss|^OK|^FAIL' "$out/$name.log")" | tee -a "$out/summary.txt"
}
launch() {  # launch NPROC BACKEND DOMAINS PROGRAM ARGS...
  local nproc=$1 backend=$2 domains=$3 prog=$4
  shift 4
  env BACKEND="$backend" ${domains:+RANK_DOMAINS=$domains} "$py" -m torch.distributed.run --standalone \
    --nproc_per_node "$nproc" --no_python bash "$here/rank_env.sh" "$py" "$here/$prog" "$@"
}
export -f launch
export py here
{ nvidia-smi -L; "$py" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'; } >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
f64=(--dtype float64 --optimizer sgd --steps "$steps")
step ref_fsdp64 300 launch 1 nccl "" fsdp_train.py "${f64[@]}" --loss-file ref_fsdp64.txt
step ref_ddp64 300 launch 1 nccl "" ddp_train.py "${f64[@]}" --loss-file ref_ddp64.txt
step ref_fsdp32 300 launch 1 nccl "" fsdp_train.py --steps "$steps" --loss-file ref_fsdp32.txt
for n in 2 4; do
  step "hetccl${n}_fsdp64" 600 launch $n hetccl $n fsdp_train.py "${f64[@]}" --loss-file "hetccl${n}_fsdp64.txt"
  step "compare${n}_fsdp64" 60 "$py" "$here/compare_losses.py" "$out/ref_fsdp64.txt" "$out/hetccl${n}_fsdp64.txt" --rtol 1e-6 --min-steps "$steps"
done
step hetccl2_ddp64 600 launch 2 hetccl 2 ddp_train.py "${f64[@]}" --loss-file hetccl2_ddp64.txt
step compare2_ddp64 60 "$py" "$here/compare_losses.py" "$out/ref_ddp64.txt" "$out/hetccl2_ddp64.txt" --rtol 1e-6 --min-steps "$steps"
step hetccl2_fsdp32 600 launch 2 hetccl 2 fsdp_train.py --steps "$steps" --loss-file hetccl2_fsdp32.txt
step compare2_fsdp32 60 "$py" "$here/compare_losses.py" "$out/ref_fsdp32.txt" "$out/hetccl2_fsdp32.txt" --rtol 1e-2 --min-steps "$steps"
exit $failed
