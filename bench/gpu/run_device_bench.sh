#!/usr/bin/env bash
# One run of every GPU benchmark of issue 3 on a 2-GPU machine (nvidia-h200-x2), side by side with NCCL and
# Gloo through PyTorch, then the markdown report $OUT/device_bench.md. Run from the repository root:
#
#   TORCH_BASELINE=/path/to/torch_baseline.py OUT=./out bash bench/gpu/run_device_bench.sh
#
# Environment:
#   TORCH_BASELINE  a copy of ../shared/bench/torch_baseline.py (the shared folder is not on the device
#                   machine: carry a copy there); without it the NCCL/Gloo baselines are skipped
#   OUT             output folder (default ./out): raw/ (every raw output), machine.txt, commands.tsv,
#                   steps.tsv (rc and seconds per command), device_bench.md
#   BUILD_DIR       hetccl build folder (default build-device-bench; reused when already built)
#   STEPS           the steps to run, in order (default: all):
#                   info build copy hetccl1 nccl hetccl2x1 hetccl2x2 tcp summary
#   ITERS, WARMUP   timed and warm-up iterations of every size (default 20 and 5, as torch_baseline.py)
#   MAX_BYTES       largest size (default 1G); GLOO_MAX_BYTES (default 256M)
#   HETCCL_DEVICE   passed to every hetccl rank (default cuda: fail rather than fall back to host ranks)
#   REPS            repetitions of every hetccl and torch measurement (default 1; the report takes the median)
# Every command has its own timeout; a failed or timed-out command is recorded and the script goes on.
# NCCL_NVLS_ENABLE=0 is exported throughout.
set -u -o pipefail

OUT=${OUT:-./out}
RAW=$OUT/raw
BUILD_DIR=${BUILD_DIR:-build-device-bench}
STEPS=${STEPS:-info build copy hetccl1 nccl hetccl2x1 hetccl2x2 tcp summary}
ITERS=${ITERS:-20}
REPS=${REPS:-1}
WARMUP=${WARMUP:-5}
MAX_BYTES=${MAX_BYTES:-1G}
GLOO_MAX_BYTES=${GLOO_MAX_BYTES:-256M}
HETCCL_DEVICE=${HETCCL_DEVICE:-cuda}
TORCH_BASELINE=${TORCH_BASELINE:-}
HERE=$(cd "$(dirname "$0")" && pwd)
COLLS="all_reduce all_gather reduce_scatter alltoall"

mkdir -p "$RAW"
export NCCL_NVLS_ENABLE=0
# hetccl-perf -G opens libcudart.so with dlopen: make the toolkit's copy findable when ldconfig does not know it.
if ! ldconfig -p 2>/dev/null | grep -q 'libcudart\.so' && [ -d /usr/local/cuda/lib64 ]; then
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
SCRIPT_START=$(date +%s)
# Appended to, so that runs split with STEPS into the same OUT keep every record.
[ -f "$OUT/steps.tsv" ] || printf 'name\trc\tseconds\n' >"$OUT/steps.tsv"
[ -f "$OUT/commands.tsv" ] || printf 'name\tcommand\n' >"$OUT/commands.tsv"

# "1K" / "256M" / "1G" / "8" -> bytes (torch_baseline.py takes plain integers).
bytes_of() {
  local v=$1
  case $v in
    *K) echo $((${v%K} << 10)) ;; *M) echo $((${v%M} << 20)) ;; *G) echo $((${v%G} << 30)) ;; *) echo "$v" ;;
  esac
}

# run NAME TIMEOUT_S [VAR=VALUE...] COMMAND...: runs the command (environment assignments first) under a
# timeout, output to $RAW/NAME.txt, and records the command, exit status and seconds.
run() {
  local name=$1 limit=$2
  shift 2
  local start rc
  printf '%s\t%s\n' "$name" "$*" >>"$OUT/commands.tsv"
  echo "== $name (limit ${limit}s, $(($(date +%s) - SCRIPT_START))s into the run): $*"
  start=$(date +%s)
  timeout -k 10 "$limit" env "$@" >"$RAW/$name.txt" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - start))" >>"$OUT/steps.tsv"
  [ $rc -eq 0 ] || echo "   $name: exit status $rc (see $RAW/$name.txt; 124 = timed out)"
  tail -n 3 "$RAW/$name.txt" | sed 's/^/   /'
}

step_info() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "host: $(hostname)"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores)"
    echo "gpus:"; nvidia-smi -L
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    echo "nvcc: $(nvcc --version 2>/dev/null | grep -i release || /usr/local/cuda/bin/nvcc --version | grep -i release)"
    python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
    echo "HETCCL_NCCL_LIB: ${HETCCL_NCCL_LIB:-unset}"
    echo "mpirun: $(mpirun --version 2>/dev/null | head -1)"
    echo "cmake: $(cmake --version | head -1)"
    echo "hetccl commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
    echo "topology:"; nvidia-smi topo -m
  } >"$OUT/machine.txt" 2>&1
  cat "$OUT/machine.txt"
}

# NCCL of the PyTorch wheel, so that hetccl's NCCL domain adaptor and the baseline use the same library.
find_torch_nccl() {
  [ -n "${HETCCL_NCCL_LIB:-}" ] && return
  local lib
  lib=$(python3 - <<'EOF' 2>/dev/null
import glob, os, importlib.util
roots = []
for name in ("nvidia", "torch"):
    spec = importlib.util.find_spec(name)
    if spec and spec.submodule_search_locations:
        roots += list(spec.submodule_search_locations)
hits = sorted(h for r in roots for h in glob.glob(os.path.join(r, "**", "libnccl.so*"), recursive=True))
print(hits[0] if hits else "")
EOF
)
  [ -n "$lib" ] && export HETCCL_NCCL_LIB=$lib
}

step_build() {
  run configure 120 cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETCCL_BUILD_TESTS=OFF
  run build 360 cmake --build "$BUILD_DIR" -j16
  ls "$BUILD_DIR"/libhetccl*.so* >"$RAW/build_libs.txt" 2>&1
  cat "$RAW/build_libs.txt"
}

PERF=$BUILD_DIR/tools/hetccl-perf
LAUNCH=$BUILD_DIR/tools/hetccl-run

# rep_name NAME K: the raw file name of repetition K (NAME, NAME.r2, NAME.r3, ...).
rep_name() { if [ "$2" -eq 1 ]; then echo "$1"; else echo "$1.r$2"; fi; }

# perf NAME TIMEOUT_S RUN_ARGS -- COLL PERF_ARGS...: hetccl-perf on device buffers under hetccl-run.
perf() {
  local name=$1 limit=$2 k
  shift 2
  local launch=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done
  shift
  local coll=$1
  shift
  for k in $(seq 1 "$REPS"); do
    run "$(rep_name "$name" "$k")" "$limit" HETCCL_DEVICE="$HETCCL_DEVICE" "$LAUNCH" "${launch[@]}" --timeout $((limit - 5)) -- \
      "$PERF" "$coll" -G -n "$ITERS" -w "$WARMUP" "$@"
  done
}

step_copy() {
  run pinned_copy 90 python3 "$HERE/pinned_copy_bw.py" --mb 256 --reps 5
}

step_hetccl1() {  # one domain: every rank in the default domain ("cuda")
  perf hetccl1_all_reduce 150 -n 2 -- all_reduce -b 1K -e "$MAX_BYTES" -f 4
  perf hetccl1_all_reduce_8B 40 -n 2 -- all_reduce -b 8 -e 8 -n 1000 -w 100
}

# torch NAME TIMEOUT_S [VAR=VALUE...] -- ARGS...: torch_baseline.py on both GPUs.
torch_run() {
  local name=$1 limit=$2 k
  shift 2
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  for k in $(seq 1 "$REPS"); do
    run "$(rep_name "$name" "$k")" "$limit" ${vars[@]+"${vars[@]}"} torchrun --standalone --nproc_per_node=2 \
      "$TORCH_BASELINE" "$@"
  done
}

step_nccl() {
  if [ -z "$TORCH_BASELINE" ] || [ ! -f "$TORCH_BASELINE" ]; then
    echo "TORCH_BASELINE is not a file ('$TORCH_BASELINE'): NCCL and Gloo baselines skipped" | tee "$RAW/nccl_skipped.txt"
    return
  fi
  local max gmax coll lo
  max=$(bytes_of "$MAX_BYTES")
  gmax=$(bytes_of "$GLOO_MAX_BYTES")
  for coll in $COLLS; do
    local tcoll=$coll
    [ "$coll" = alltoall ] && tcoll=all_to_all
    # torch_baseline.py labels all_gather by its output (size x 2 ranks): start at 512 to get 1K..MAX rows.
    lo=1024
    local hi=$max ghi=$gmax
    if [ "$coll" = all_gather ]; then lo=512; hi=$((max / 2)); ghi=$((gmax / 2)); fi
    local args=(--coll "$tcoll" -b "$lo" -f 4 -n "$ITERS" -w "$WARMUP")
    torch_run "nccl_default_$coll" 90 -- --backend nccl "${args[@]}" -e "$hi"
    torch_run "nccl_host_$coll" 120 NCCL_P2P_DISABLE=1 -- --backend nccl "${args[@]}" -e "$hi"
    torch_run "gloo_$coll" 120 -- --backend gloo --device cuda "${args[@]}" -e "$ghi"
  done
  torch_run nccl_socket_all_reduce 150 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- --backend nccl \
    --coll all_reduce -b 1024 -e "$max" -f 4 -n "$ITERS" -w "$WARMUP"
  torch_run nccl_default_all_reduce_8B 60 -- --backend nccl --coll all_reduce -b 8 -e 8 -n 1000 -w 100
}

step_hetccl2x1() {  # two domains of one GPU each
  local coll
  for coll in $COLLS; do
    perf "hetccl2x1_$coll" 150 -n 2 --domains 2 -- "$coll" -b 1K -e "$MAX_BYTES" -f 4
  done
}

step_hetccl2x2() {  # 4 ranks: d0 = ranks 0,1 on GPUs 0,1; d1 = ranks 2,3 on GPUs 0,1 (device = local rank % 2)
  local coll
  for coll in $COLLS; do
    perf "hetccl2x2_$coll" 150 -n 4 --domains 2 --layout blocks -- "$coll" -b 1K -e "$MAX_BYTES" -f 4
  done
}

step_tcp() {  # two domains on "different hosts" (HETCCL_HOST_ID h0, h1): the bytes go over tcp
  perf hetccltcp_all_reduce 180 -n 2 --domains 2 --host-ids 2 -- all_reduce -b 1K -e "$MAX_BYTES" -f 4
}

step_summary() {
  python3 "$HERE/summarize_device_bench.py" "$OUT" && echo "report: $OUT/device_bench.md"
}

find_torch_nccl
for s in $STEPS; do
  case $s in
    info | build | copy | hetccl1 | nccl | hetccl2x1 | hetccl2x2 | tcp | summary) "step_$s" ;;
    *) echo "unknown step '$s' (info build copy hetccl1 nccl hetccl2x1 hetccl2x2 tcp summary)"; exit 2 ;;
  esac
done
echo "done in $(($(date +%s) - SCRIPT_START)) s; raw outputs in $RAW"
