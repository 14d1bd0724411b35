# Shared by the device benchmarks of GPU ranks as hosts (run_staged_net_bench.sh, run_net_pipeline_bench.sh,
# run_hier_hosts_bench.sh; sourced, not run): the common settings, the machine record and the timed step runner.
# shellcheck shell=bash

# bench_settings: the defaults every such benchmark takes (OUT ./out, BUILD build-gpu, ITERS 10, WARMUP 3,
# REPS 2, MIN 1M, MAX 256M), RAW=$OUT/raw created, the CUDA device and a long HETCCL_TIMEOUT, NCCL's NVLink
# SHARP off, and BUILD's libraries (then CUDA's) first on LD_LIBRARY_PATH.
bench_settings() {
  OUT=${OUT:-./out}
  BUILD=${BUILD:-build-gpu}
  ITERS=${ITERS:-10}
  WARMUP=${WARMUP:-3}
  REPS=${REPS:-2}
  MIN=${MIN:-1M}
  MAX=${MAX:-256M}
  RAW=$OUT/raw
  mkdir -p "$RAW"
  export NCCL_NVLS_ENABLE=0 HETCCL_DEVICE=cuda HETCCL_TIMEOUT=120
  [ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  LD_LIBRARY_PATH=$(cd "$BUILD" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
}

# write_machine_info [LINE...]: $OUT/machine.txt (date, host, CPU, GPUs, driver, torch, the extra lines,
# the checkout's commit) and a fresh $OUT/steps.tsv.
write_machine_info() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; echo "host: $(hostname)"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores)"
    nvidia-smi -L; echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda)' 2>&1
    local line
    for line in "$@"; do echo "$line"; done
    echo "hetccl: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  } >"$OUT/machine.txt" 2>&1
  printf 'name\trc\tseconds\tcommand\n' >"$OUT/steps.tsv"
}

# run NAME LIMIT VAR=VALUE... COMMAND...: runs it under `timeout LIMIT` into $RAW/NAME.txt, records it in
# steps.tsv and prints its result rows (and any error lines).
run() {
  local name=$1 limit=$2 start rc; shift 2
  start=$(date +%s)
  timeout -k 10 "$limit" env "$@" >"$RAW/$name.txt" 2>&1; rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - start))" "$*" >>"$OUT/steps.tsv"
  echo "== $name rc=$rc"; grep -E "^ +[0-9]+ |wrong|rror" "$RAW/$name.txt" | tail -8
}
