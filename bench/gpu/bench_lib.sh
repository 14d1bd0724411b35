# Shared by the device benchmark scripts of bench/gpu (sourced, not run): output layout, the timed
# command runner, machine info, the build, hetccl-perf under hetccl-run and torchrun launches.
# The sourcing script sets OUT, BUILD_DIR, ITERS, WARMUP, REPS, HETCCL_DEVICE and TORCH_BASELINE first;
# NPROC (torchrun processes, default 2) may be set at any time before torch_run.
# shellcheck shell=bash
RAW=$OUT/raw
NPROC=${NPROC:-2}
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
    echo "/dev/shm: $(df -h /dev/shm | tail -1)"
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

# torch_run NAME TIMEOUT_S [VAR=VALUE...] -- ARGS...: $TORCH_BASELINE on $NPROC GPUs.
torch_run() {
  local name=$1 limit=$2 k
  shift 2
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  for k in $(seq 1 "$REPS"); do
    run "$(rep_name "$name" "$k")" "$limit" ${vars[@]+"${vars[@]}"} torchrun --standalone --nproc_per_node="$NPROC" \
      "$TORCH_BASELINE" "$@"
  done
}

