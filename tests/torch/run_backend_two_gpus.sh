#!/usr/bin/env bash
# run_backend_two_gpus.sh LIB_DIR : FSDP2 through the torch.distributed backend "hetccl" on 2 GPUs against
# backend "nccl" on the same 2 GPUs (one rank per GPU): hetccl with both ranks in one domain (every device
# call delegated to NCCL) and with a domain per GPU (the stream pipeline between them). float64 + SGD losses
# must agree within 1e-6 (same rank count, so only the reduction's rounding order can differ), float32 +
# AdamW within 1e-3. LIB_DIR holds libhetccl.so and libhetccl-cuda.so. Environment: PYTHON, OUT, STEPS (30).
set -uo pipefail
lib=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
out=${OUT:-$PWD/backend-two-gpus}
mkdir -p "$out"
steps=${STEPS:-30}
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_LIBRARY=$lib/libhetccl.so \
  HETCCL_CUDA_PLUGIN=$lib/libhetccl-cuda.so PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} \
  NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120} PYTHONUNBUFFERED=1 OUT_DIR=$out
failed=0
run() {  # run NAME BACKEND DOMAINS PROGRAM ARGS...
  local name=$1 backend=$2 domains=$3 prog=$4 start=$SECONDS
  shift 4
  timeout --kill-after=10 300 env BACKEND="$backend" ${domains:+RANK_DOMAINS=$domains} "$py" -m torch.distributed.run \
    --standalone --nproc_per_node 2 --no_python bash "$here/rank_env.sh" "$py" "$here/$prog" "$@" >"$out/$name.log" 2>&1 ||
    { failed=1; echo "FAIL $name"; tail -n 5 "$out/$name.log"; }
  echo "$name $((SECONDS - start))s: $(grep -m1 'steps, loss' "$out/$name.log")" | tee -a "$out/summary.txt"
}
compare() {  # compare REF CANDIDATE RTOL
  "$py" "$here/compare_losses.py" "$out/$1.txt" "$out/$2.txt" --rtol "$3" --min-steps "$steps" 2>&1 | tee -a "$out/summary.txt" | grep -q '^OK' || failed=1
}
{ nvidia-smi -L; "$py" -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } | tee "$out/machine.txt"
f64=(fsdp_train.py --dtype float64 --optimizer sgd --steps "$steps")
run nccl_fsdp64 nccl "" "${f64[@]}" --loss-file nccl_fsdp64.txt
run nccl_fsdp32 nccl "" fsdp_train.py --steps "$steps" --loss-file nccl_fsdp32.txt
run one_fsdp64 hetccl "" "${f64[@]}" --loss-file one_fsdp64.txt
run two_fsdp64 hetccl 2 "${f64[@]}" --loss-file two_fsdp64.txt
run two_fsdp32 hetccl 2 fsdp_train.py --steps "$steps" --loss-file two_fsdp32.txt
compare nccl_fsdp64 one_fsdp64 1e-6
compare nccl_fsdp64 two_fsdp64 1e-6
compare nccl_fsdp32 two_fsdp32 1e-3
exit $failed
