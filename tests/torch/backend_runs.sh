# backend_runs.sh: sourced by run_backend_one_gpu.sh and run_backend_two_gpus.sh (training through the
# torch.distributed backend "hetccl" on a GPU machine, against reference runs on NCCL). Expects LIB_DIR as
# the caller's $1 (libhetccl.so and libhetccl-cuda.so) and DEFAULT_OUT; sets lib, here, src, py, out, steps,
# failed, the environment every run needs, and the helpers:
#   step NAME LIMIT CMD...             run CMD (a command or `launch ...`) with a deadline, output to
#                                      $out/NAME.log, a PASS/FAIL line to $out/summary.txt
#   launch NPROC BACKEND DOMAINS PROG ARGS...   one torchrun job of tests/torch/PROG (DOMAINS: rank_env.sh's
#                                      RANK_DOMAINS, empty for none)
#   compare NAME REF CANDIDATE RTOL    compare_losses.py on $out/REF.txt and $out/CANDIDATE.txt, as a step
# Environment: PYTHON (python3), OUT (results; default DEFAULT_OUT), STEPS (30).
set -uo pipefail
lib=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
out=${OUT:-$PWD/$DEFAULT_OUT}
mkdir -p "$out"
steps=${STEPS:-30}
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETCCL_LIBRARY=$lib/libhetccl.so \
  HETCCL_CUDA_PLUGIN=$lib/libhetccl-cuda.so PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} \
  NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120} PYTHONUNBUFFERED=1 OUT_DIR=$out
failed=0
step() {
  local name=$1 limit=$2 start=$SECONDS rc verdict=PASS
  shift 2
  timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" >"$out/$name.log" 2>&1
  rc=$?
  [[ $rc -eq 0 ]] || { verdict=FAIL; failed=1; tail -n 6 "$out/$name.log"; }
  printf '%s %-22s rc=%-3s %4ss  %s\n' "$verdict" "$name" "$rc" "$((SECONDS - start))" "$(grep -m1 -E 'steps, loss|^OK|^FAIL' "$out/$name.log")" | tee -a "$out/summary.txt"
}
launch() {
  local nproc=$1 backend=$2 domains=$3 prog=$4
  shift 4
  env BACKEND="$backend" ${domains:+RANK_DOMAINS=$domains} "$py" -m torch.distributed.run --standalone \
    --nproc_per_node "$nproc" --no_python bash "$here/rank_env.sh" "$py" "$here/$prog" "$@"
}
compare() {
  step "$1" 60 "$py" "$here/compare_losses.py" "$out/$2.txt" "$out/$3.txt" --rtol "$4" --min-steps "$steps"
}
export -f launch
export py here
{ nvidia-smi -L; "$py" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'; } >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
