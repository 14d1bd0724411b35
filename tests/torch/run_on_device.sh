#!/usr/bin/env bash
# run_on_device.sh BUILD_DIR [STAGE...] : unmodified torchrun programs on a machine with 2+ GPUs, served by
# hetccl's drop-in (BUILD_DIR/dropin/libnccl.so.2, LD_PRELOAD) and by the real NCCL for reference. Builds
# nothing. Results (see TORCH_RESULTS below): one log per step, loss files, bench JSON, summary.txt
# (PASS/FAIL per step, appended by every call) and bench.md. Exit status 1 when any step failed.
#
# Stages (default: all, in this order; run a few at a time to stay inside a command time limit):
#   info   versions, GPUs, hetccl-info --torch on the installed PyTorch
#   ref    pure NCCL, 2 ranks: collectives, DDP 200 steps, FSDP 50 steps (the reference losses)
#   one    hetccl, one domain (2 ranks, 2 GPUs): the same three, losses compared with ref; plus which of
#          its own names the real NCCL called through the drop-in (HETCCL_DEBUG=INFO; routed back to it)
#   two    hetccl, two domains 2x1 (2 ranks, 2 GPUs, HETCCL_DOMAIN per GPU)
#   four   hetccl, two domains 2x2 (4 ranks on 2 GPUs); same global batch, so compared with the 2-rank ref
#   bench  DDP step time, 2 ranks: NCCL, hetccl one domain, hetccl two domains, Gloo backend
#   bench_mlp  DDP step time of a gradient-heavy model (model.Mlp, bfloat16, 256 MiB of gradients per step),
#          2 ranks: NCCL, hetccl two domains (2x1), Gloo, and the compute alone (no_sync under NCCL);
#          efficiency = NCCL's step / hetccl's (issue 26's DDP goal); table in bench_mlp.md
# Environment: PYTHON (python3), TORCHRUN (default: $PYTHON -m torch.distributed.run), TORCH_RESULTS, OUT,
# DDP_STEPS (200), FSDP_STEPS (50), BENCH_STEPS (100), BENCH_WARMUP (20), BENCH_REPS (1), MLP_BATCH (8192), HETCCL_TIMEOUT (120),
# HETCCL_NCCL_LIB (default: the wheel's libnccl.so.2 under site-packages/nvidia when found).
set -uo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [info|ref|one|two|four|bench|bench_mlp ...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(info ref one two four bench)
here=$(cd "$(dirname "$0")" && pwd)
# Results: TORCH_RESULTS (kept between calls, so that later stages compare with an earlier ref), else
# $OUT, else ./torch-results. With both set, TORCH_RESULTS is copied to $OUT/torch-results at the end.
out=${TORCH_RESULTS:-${OUT:-$PWD/torch-results}}
mkdir -p "$out" && out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
dropin=$build/dropin/libnccl.so.2
[[ -r "$dropin" ]] || { echo "no $dropin: build the drop-in first (cmake --build $build --target hetccl_nccl)" >&2; exit 2; }
ddp_steps=${DDP_STEPS:-200} fsdp_steps=${FSDP_STEPS:-50} bench_steps=${BENCH_STEPS:-100} warmup=${BENCH_WARMUP:-20}

export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120} PYTHONUNBUFFERED=1
export RANK_GPUS=$($py -c 'import torch; print(torch.cuda.device_count())') || exit 2
[[ $RANK_GPUS -ge 2 ]] || { echo "needs 2 GPUs, found $RANK_GPUS" >&2; exit 2; }
# The wheel's real NCCL, for collectives inside a domain (else hetccl searches; see docs/DROP_IN.md).
real=$($py - <<'EOF'
import glob, os, site, sys
dirs = site.getsitepackages() + [site.getusersitepackages()] + sys.path
hits = [h for d in dirs for h in glob.glob(os.path.join(d, "nvidia", "**", "libnccl.so.2"), recursive=True)]
print(hits[0] if hits else "")
EOF
)
[[ -n "$real" && -z "${HETCCL_NCCL_LIB:-}" ]] && export HETCCL_NCCL_LIB=$real

summary=$out/summary.txt
failed=0
# launch MODE NPROC PROGRAM ARGS... : one torchrun job. MODE: nccl (no preload), one (hetccl, one domain),
# two (hetccl, a domain per GPU), gloo (Gloo backend, no preload).
launch() {
  local mode=$1 nproc=$2 prog=$3
  shift 3
  local -a env=(OUT_DIR="$out")
  case $mode in
    one) env+=(RANK_PRELOAD="$dropin") ;;
    two) env+=(RANK_PRELOAD="$dropin" RANK_DOMAINS=2) ;;
    gloo) env+=(BACKEND=gloo) ;;
  esac
  env "${env[@]}" ${TORCHRUN:-$py -m torch.distributed.run} --standalone --nproc_per_node "$nproc" --no_python \
    bash "$here/rank_env.sh" "$py" "$here/$prog" "$@"
}
export -f launch
export here py out dropin
# step NAME TIMEOUT CMD... : runs CMD (a command or `launch ...`) under a deadline (timeout kills its whole
# process group), output to $out/NAME.log, a PASS/FAIL line to summary.txt.
step() {
  local name=$1 limit=$2 start=$SECONDS rc
  shift 2
  echo "== $name: $*" >"$out/$name.log"
  timeout --kill-after=20 "$limit" bash -c '"$@"' _ "$@" >>"$out/$name.log" 2>&1
  rc=$?
  tail -n 4 "$out/$name.log"
  local verdict=PASS
  [[ $rc -eq 0 ]] || { verdict=FAIL; failed=1; }
  printf '%s %-28s rc=%-3s %4ss\n' "$verdict" "$name" "$rc" "$((SECONDS - start))" | tee -a "$summary"
}
# compare NAME REF CANDIDATE STEPS [RTOL (1e-3)]
compare() { step "compare_$1" 60 "$py" "$here/compare_losses.py" "$out/$2" "$out/$3" --rtol "${5:-1e-3}" --min-steps "$4"; }
# suite NAME MODE NPROC : collectives, DDP and FSDP, losses compared with the pure-NCCL reference.
suite() {
  local name=$1 mode=$2 nproc=$3
  step "${name}_collectives" 600 launch "$mode" "$nproc" collectives.py
  step "${name}_ddp" 900 launch "$mode" "$nproc" ddp_train.py --steps "$ddp_steps" --loss-file "${name}_ddp.txt" --label "$name"
  step "${name}_fsdp" 600 launch "$mode" "$nproc" fsdp_train.py --steps "$fsdp_steps" --loss-file "${name}_fsdp.txt" --label "$name"
  # DDP in float64 as well: with 4 ranks the gradient sum is rounded in another order than with the 2-rank
  # reference, and in float32 that difference grows over 200 steps of training (3e-3 measured by step 196);
  # in float64 it stays far below 1e-6, so a missing or doubled contribution cannot hide in it.
  step "${name}_ddp64" 900 launch "$mode" "$nproc" ddp_train.py --steps "$ddp_steps" --dtype float64 \
    --loss-file "${name}_ddp64.txt" --label "${name} float64"
  if [[ $name != ref ]]; then
    local rtol32=1e-3
    [[ $nproc -eq 2 ]] || rtol32=1e-2  # float32 with a different rank count: rounding order, see above
    compare "${name}_ddp" ref_ddp.txt "${name}_ddp.txt" "$ddp_steps" "$rtol32"
    compare "${name}_ddp64" ref_ddp64.txt "${name}_ddp64.txt" "$ddp_steps" 1e-6
    compare "${name}_fsdp" ref_fsdp.txt "${name}_fsdp.txt" "$fsdp_steps"
  fi
}

for stage in "${stages[@]}"; do
  case $stage in
    info)
      step info 120 bash -c "nvidia-smi -L; $py -c 'import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"nccl\", torch.cuda.nccl.version())';
        echo HETCCL_NCCL_LIB=\${HETCCL_NCCL_LIB:-unset}; \"$build/tools/hetccl-info\" --torch \"\$($py -c 'import torch, os; print(os.path.dirname(torch.__file__))')\"" ;;
    ref) suite ref nccl 2 ;;
    one)
      suite one one 2
      # Which of its own names the real NCCL called through the preloaded drop-in (each routed back to it).
      step one_routing 600 bash -c 'HETCCL_DEBUG=INFO HETCCL_DEBUG_SUBSYS=INIT launch one 2 collectives.py'
      grep -ho "routing a vendor library's own call to [A-Za-z]*\|calls from .* are routed back to it" \
        "$out/one_routing.log" | sort | uniq -c | tee "$out/one_routing.txt" ;;
    two) suite two two 2 ;;
    four) suite four two 4 ;;
    bench)
      # BENCH_REPS rounds, each running the four modes back to back, so slow drifts of the machine hit
      # every mode alike; the report takes the median over rounds of each run's median step time.
      for rep in $(seq 1 "${BENCH_REPS:-1}"); do
        for mode in nccl one two gloo; do
          step "bench_${mode}_r$rep" 600 launch "$mode" 2 ddp_train.py --bench --steps "$bench_steps" \
            --warmup "$warmup" --bench-file "bench_${mode}_r$rep.json" --label "$mode"
        done
      done
      "$py" - "$out" <<'EOF' | tee "$out/bench.md"
import glob, json, os, statistics, sys
out = sys.argv[1]
r = {}
for m in ("nccl", "one", "two", "gloo"):
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, f"bench_{m}_r*.json")))]
    if runs:
        r[m] = runs
names = {"nccl": "NCCL (no hetccl)", "one": "hetccl, one domain", "two": "hetccl, two domains (2x1)", "gloo": "Gloo backend"}
med = {m: statistics.median(v["median_ms"] for v in runs) for m, runs in r.items()}
print("| run | median ms/step (median of rounds) | each round's median | p10 | p90 (round 1) |\n|---|---|---|---|---|")
for m, runs in r.items():
    each = " ".join(f"{v['median_ms']:.2f}" for v in runs)
    print(f"| {names[m]} | {med[m]:.2f} | {each} | {runs[0]['p10_ms']:.2f} | {runs[0]['p90_ms']:.2f} |")
if "nccl" in med and "one" in med:
    print(f"\nhetccl one domain vs NCCL: {100 * (med['one'] / med['nccl'] - 1):+.1f}% (goal <= +1%)")
if "gloo" in med and "two" in med:
    print(f"hetccl two domains vs Gloo: {med['gloo'] / med['two']:.2f}x faster")
EOF
      ;;
    bench_mlp)
      for rep in $(seq 1 "${BENCH_REPS:-1}"); do
        for mode in nccl two gloo nosync; do
          args=(--bench --model mlp --dtype bfloat16 --optimizer sgd --global-batch "${MLP_BATCH:-8192}"
                --steps "$bench_steps" --warmup "$warmup" --bench-file "mlp_${mode}_r$rep.json" --label "mlp $mode")
          if [[ $mode == nosync ]]; then
            step "mlp_${mode}_r$rep" 600 launch nccl 2 ddp_train.py "${args[@]}" --no-sync
          else
            step "mlp_${mode}_r$rep" 600 launch "$mode" 2 ddp_train.py "${args[@]}"
          fi
        done
      done
      "$py" "$here/summarize_mlp_bench.py" "$out" | tee "$out/bench_mlp.md" ;;
    *) echo "unknown stage $stage" >&2; failed=1 ;;
  esac
done
echo "== summary ($summary)"
cat "$summary"
if [[ -n "${TORCH_RESULTS:-}" && -n "${OUT:-}" && "$out" != "$(cd "$OUT" && pwd)" ]]; then
  mkdir -p "$OUT/torch-results" && cp -r "$out"/. "$OUT/torch-results/"
fi
exit $failed
