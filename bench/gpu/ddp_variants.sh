#!/usr/bin/env bash
# ddp_variants.sh ROUNDS VARIANT... : the DDP step of tests/torch's gradient-heavy model (model.Mlp, bfloat16,
# 256 MiB of gradients per step, DDP's 25 MB buckets; 2 ranks, one per GPU) under several variants, rounds
# interleaved, so that builds and settings are compared in one run on the same GPUs (issue 26).
#
# VARIANT is LABEL:MODE[:ENV=VALUE,...]; MODE is nccl (torch's NCCL), nosync (NCCL, DDP's no_sync: the compute
# alone), or a directory holding a hetccl build (dropin/libnccl.so.2, libhetccl-cuda.so), run with a domain
# per GPU (the stream pipeline between them). Example:
#   bash bench/gpu/ddp_variants.sh 2 nccl:nccl base:devbin-a new:devbin-b "new32:devbin-b:CUDA_DEVICE_MAX_CONNECTIONS=32"
# Environment: OUT (results; default ./ddp-variants), PYTHON (python3), STEPS (40), WARMUP (30), MLP_BATCH (8192).
# Prints one line per variant: the median over rounds of each round's median ms/step, and each round's.
set -uo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 ROUNDS LABEL:MODE[:ENV=V,...] ..." >&2; exit 2; }
rounds=$1
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/ddp-variants}/ddp
mkdir -p "$out" && out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
here=$PWD
cd "$repo/tests/torch" || exit 2
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=${HETCCL_TIMEOUT:-120} PYTHONUNBUFFERED=1
for r in $(seq 1 "$rounds"); do
  for v in "$@"; do
    IFS=: read -r label mode envs <<<"$v"
    env_args=(OUT_DIR="$out")
    [[ -n "$envs" ]] && IFS=, read -r -a extra <<<"$envs" && env_args+=("${extra[@]}")
    args=(--bench --model mlp --dtype bfloat16 --optimizer sgd --global-batch "${MLP_BATCH:-8192}"
          --steps "${STEPS:-40}" --warmup "${WARMUP:-30}" --bench-file "${label}_r$r.json" --label "$label")
    case $mode in
      nccl) ;;
      nosync) args+=(--no-sync) ;;
      *) d=$(cd "$here" && cd "$mode" && pwd) || exit 2
         env_args+=(RANK_PRELOAD="$d/dropin/libnccl.so.2" RANK_DOMAINS=2 HETCCL_CUDA_PLUGIN="$d/libhetccl-cuda.so") ;;
    esac
    if ! timeout 600 env "${env_args[@]}" "$py" -m torch.distributed.run --standalone --nproc_per_node 2 --no_python \
        bash rank_env.sh "$py" ddp_train.py "${args[@]}" >"$out/${label}_r$r.log" 2>&1; then
      echo "$label round $r FAILED (log: $out/${label}_r$r.log)"; tail -5 "$out/${label}_r$r.log"
    fi
  done
done
"$py" - "$out" "$@" <<'EOF'
import json, os, statistics, sys
out = sys.argv[1]
for v in sys.argv[2:]:
    label = v.split(":")[0]
    runs = []
    for name in sorted(os.listdir(out)):
        if name.startswith(label + "_r") and name.endswith(".json"):
            runs.append(json.load(open(os.path.join(out, name)))["median_ms"])
    if runs:
        print(f"{label:12s} {statistics.median(runs):8.2f} ms/step   rounds: {' '.join(f'{x:.2f}' for x in runs)}   ({v})")
    else:
        print(f"{label:12s} no result ({v})")
EOF
