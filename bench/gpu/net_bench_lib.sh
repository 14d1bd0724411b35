# Shared by the device benchmarks of GPU ranks as hosts (run_staged_net_bench.sh, run_net_pipeline_bench.sh;
# sourced, not run): the machine record and the timed step runner. The sourcing script sets OUT and RAW.
# shellcheck shell=bash

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
