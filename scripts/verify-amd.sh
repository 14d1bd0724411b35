#!/usr/bin/env bash
# verify-amd.sh: the AMD verification kit. One command for the owner of an AMD GPU (or of a mixed NVIDIA +
# AMD pair of hosts): detect ROCm, build hetccl with the HIP plugin, run the unit tests, the GPU checks with
# HIP ranks, the drop-in librccl.so under a ROCm PyTorch, optionally the mixed-vendor benchmark across two
# hosts, and pack everything into hetccl-amd-report-<host>-<date>.tar.gz to send back.
#
# NOTE: written without access to an AMD GPU; only its no-ROCm path has been run (CI: `verify_amd_dry_run`).
#
# Every step's output goes to its own log; a failing step is recorded and the next one runs. No sudo, no
# installation, nothing outside the build directory and the report directory is written.
#
# Exit status: 0 every step passed; 1 at least one step failed (see summary.txt in the report);
#              2 usage error; 3 no AMD GPU/ROCm found on a single host (the report says what was found;
#              no GPU step ran). In --mixed mode a host without ROCm (the NVIDIA host) is normal.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/verify-amd.sh [options]

  One AMD host:   scripts/verify-amd.sh
  Mixed pair:     on BOTH hosts, the same secret and the address of rank 0's host:
                    secret=$(openssl rand -hex 16)           # once, give it to both hosts
    AMD host:       scripts/verify-amd.sh --mixed --rank 0 --root amd-host   --secret $secret
    NVIDIA host:    scripts/verify-amd.sh --mixed --rank 1 --root amd-host   --secret $secret
                  (either host may be rank 0; --root always names rank 0's host, reachable from the other)

options:
  --build-dir DIR   build directory (default: <repo>/build-amd); an existing one is reused (incremental build)
  --no-build        do not configure or build: use --build-dir as it is (CI, or a build you made yourself)
  --out DIR         where the report folder and tarball go (default: current directory)
  --dry-run         detect and report only: no build, no test, no GPU work
  --skip-unit       skip the unit tests (ctest)
  --skip-torch      skip the PyTorch drop-in check
  --sizes MIN:MAX   hetccl-perf size range (default 1K:64M, factor 4)
  --mixed           mixed-vendor mode: one rank on this host, one on the peer host (see above)
  --rank 0|1        this host's rank in --mixed mode
  --root HOST       rank 0's host (name or address reachable from both hosts) in --mixed mode
  --peer HOST       the other host (recorded in the report; for rank 1 it defaults --root)
  --port P          first TCP port of rank 0's rendezvous root (default 29600; each benchmark uses P+i)
  --secret HEX      job secret (32+ hex digits), the same on both hosts (default: $HETCCL_SECRET)
  --ifname IF       HETCCL_SOCKET_IFNAME for the cross-host runs (e.g. eth0; default: hetccl chooses)
  -h, --help        this text

Environment honoured: HETCCL_RCCL_LIB (the real RCCL; default: found under /opt/rocm/lib or by ldconfig),
HETCCL_HIP_PLUGIN, HETCCL_HIP_RUNTIME_LIB, ROCM_PATH (default /opt/rocm), PYTHON (python3).

Exit status: 0 all passed, 1 a step failed, 2 usage error, 3 no AMD GPU/ROCm found (single host).
Send the tarball it prints back: attach it to an issue on the hetccl project's issue tracker.
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$repo/build-amd"
out_dir=$PWD
no_build=0 dry_run=0 skip_unit=0 skip_torch=0 mixed=0
rank="" root="" peer="" port=29600 secret=${HETCCL_SECRET:-} ifname=""
size_min=1K size_max=64M

die_usage() { echo "verify-amd.sh: $1 (see --help)" >&2; exit 2; }
need_arg() { [[ $# -ge 2 && -n $2 ]] || die_usage "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --build-dir) need_arg "$@"; build_dir=$2; shift ;;
    --no-build) no_build=1 ;;
    --out) need_arg "$@"; out_dir=$2; shift ;;
    --dry-run) dry_run=1 ;;
    --skip-unit) skip_unit=1 ;;
    --skip-torch) skip_torch=1 ;;
    --sizes) need_arg "$@"; [[ $2 == *:* ]] || die_usage "--sizes MIN:MAX"; size_min=${2%%:*}; size_max=${2##*:}; shift ;;
    --mixed) mixed=1 ;;
    --rank) need_arg "$@"; rank=$2; shift ;;
    --root) need_arg "$@"; root=$2; shift ;;
    --peer) need_arg "$@"; peer=$2; shift ;;
    --port) need_arg "$@"; port=$2; shift ;;
    --secret) need_arg "$@"; secret=$2; shift ;;
    --ifname) need_arg "$@"; ifname=$2; shift ;;
    *) die_usage "unknown option '$1'" ;;
  esac
  shift
done
if [[ $mixed == 1 ]]; then
  [[ $rank == 0 || $rank == 1 ]] || die_usage "--mixed needs --rank 0 or --rank 1"
  [[ -z $root && $rank == 1 ]] && root=$peer
  [[ -n $root ]] || die_usage "--mixed needs --root HOST (rank 0's host)"
  [[ $port =~ ^[0-9]+$ && $port -ge 1024 && $port -le 65000 ]] || die_usage "--port must be 1024..65000"
  [[ $secret =~ ^[0-9a-fA-F]{32,}$ ]] || die_usage "--mixed needs --secret (32+ hex digits, the same on both hosts)"
fi
build_dir=$(mkdir -p "$(dirname "$build_dir")" && cd "$(dirname "$build_dir")" && pwd)/$(basename "$build_dir")
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

host=$(hostname -s 2>/dev/null || hostname)
stamp=$(date -u +%Y%m%d-%H%M%S)
name="hetccl-amd-report-$host-$stamp"
report="$out_dir/$name"
mkdir -p "$report/logs"
summary="$report/summary.txt"
results="$report/results.tsv"
printf 'step\tstatus\tseconds\tnote\n' >"$results"
failures=0
py=${PYTHON:-python3}
rocm=${ROCM_PATH:-/opt/rocm}
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on shared machines (NVIDIA host of a mixed pair)

say() { echo "verify-amd: $*" | tee -a "$report/verify-amd.log"; }
record() {  # record NAME STATUS SECONDS NOTE
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$results"
  [[ $2 == FAIL ]] && failures=$((failures + 1))
  say "$(printf '%-28s %-5s %4ss  %s' "$1" "$2" "$3" "${4:-}")"
}
# step NAME LIMIT_SECONDS CMD... : runs CMD under a deadline (its whole process group is killed after it),
# output to logs/NAME.log; PASS when it exits 0. Never stops the script.
step() {
  local name=$1 limit=$2 start=$SECONDS rc=0
  shift 2
  { echo "== $name: $*"; echo "== started $(date -u +%FT%TZ)"; } >"$report/logs/$name.log"
  timeout --kill-after=20 "$limit" "$@" >>"$report/logs/$name.log" 2>&1 || rc=$?
  echo "== exit status $rc" >>"$report/logs/$name.log"
  local note=""
  [[ $rc == 124 || $rc == 137 ]] && note="timed out after ${limit}s"
  [[ $rc != 0 && -z $note ]] && note="exit $rc: $(grep -v '^==' "$report/logs/$name.log" | tail -n 1 | cut -c1-120)"
  if [[ $rc == 0 ]]; then record "$name" PASS $((SECONDS - start)); else record "$name" FAIL $((SECONDS - start)) "$note"; fi
}
skip() { record "$1" SKIP 0 "$2"; }
have() { command -v "$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------------------------------------- detect
say "report folder: $report"
rocm_found=0 amd_gpu=0 gfx="" rocm_version="" rccl="" torch_hip=""
{
  echo "== host"; uname -a; grep -E '^(PRETTY_NAME|VERSION_ID)=' /etc/os-release 2>/dev/null || true
  grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true; nproc
  echo "== hetccl source"; git -C "$repo" log -1 --format='%H %cd %s' 2>/dev/null || echo "(not a git checkout)"
  git -C "$repo" status --short 2>/dev/null | head -n 50 || true
  echo "== tools"; for t in cmake ninja gcc g++ clang clang++ hipcc hipconfig "$py" nvidia-smi nvcc; do
    printf '%-10s %s\n' "$t" "$(command -v "$t" 2>/dev/null || echo -)"; done
  cmake --version 2>/dev/null | head -n 1 || true; g++ --version 2>/dev/null | head -n 1 || true
} >"$report/system.txt" 2>&1

{
  echo "== ROCm at $rocm: $([[ -d $rocm ]] && echo present || echo absent)"
  for f in "$rocm/.info/version" "$rocm/.info/version-dev"; do [[ -f $f ]] && echo "$f: $(cat "$f")"; done
  for t in rocminfo rocm-smi amd-smi; do
    p=$(command -v "$t" 2>/dev/null || true); [[ -z $p && -x $rocm/bin/$t ]] && p=$rocm/bin/$t
    echo "== $t: ${p:-not found}"
    [[ -z $p ]] && continue
    case $t in
      rocminfo) timeout 60 "$p" 2>&1 | tee "$report/rocminfo.txt" | grep -E 'Marketing Name|Name: +gfx|Compute Unit' | head -n 24 || true ;;
      rocm-smi) timeout 60 "$p" 2>&1 | head -n 40 || true; timeout 60 "$p" --showdriverversion 2>&1 | tail -n 3 || true ;;
      amd-smi) timeout 60 "$p" version 2>&1 | head -n 5 || true; timeout 60 "$p" list 2>&1 | head -n 30 || true ;;
    esac
  done
  echo "== ROCm packages"; dpkg-query -W 'rocm*' 'hip*' 'libamdhip64*' 'librccl*' 'rccl*' 'rocminfo' 2>/dev/null || rpm -qa 2>/dev/null | grep -iE '^(rocm|hip|rccl)' || true
  echo "== /dev/kfd: $([[ -e /dev/kfd ]] && echo present || echo absent); /dev/dri: $(find /dev/dri -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)"
  echo "== RCCL"
  ls -l "$rocm"/lib/librccl.so* 2>/dev/null || true
  ldconfig -p 2>/dev/null | grep -E 'librccl\.so|libamdhip64\.so' || true
  echo "== compilers for amdgcn"
  for c in "$rocm/llvm/bin/clang++" "$(command -v clang++ 2>/dev/null || true)"; do
    [[ -n $c && -x $c ]] || continue
    echo "$c: $("$c" --version 2>/dev/null | head -n 1)"
    "$c" -print-targets 2>/dev/null | grep -i amdgcn || echo "  (no amdgcn target)"
  done
  [[ -x $rocm/bin/hipconfig ]] && "$rocm/bin/hipconfig" --version 2>/dev/null && echo
  echo "== PyTorch"
  timeout 120 "$py" -c 'import torch, os; print("torch", torch.__version__, "hip", torch.version.hip, "cuda", torch.version.cuda, "devices", torch.cuda.device_count(), "site", os.path.dirname(os.path.dirname(torch.__file__)))' 2>&1 | tail -n 1 || true
  echo "== NVIDIA (mixed pairs)"; timeout 30 nvidia-smi -L 2>/dev/null || echo "nvidia-smi: none"
} >"$report/rocm.txt" 2>&1 || true

if [[ -d $rocm ]] || have rocminfo || have hipcc; then rocm_found=1; fi
if [[ -f $report/rocminfo.txt ]]; then
  gfx=$(grep -oE 'Name: +gfx[0-9a-f]+' "$report/rocminfo.txt" | awk '{print $2}' | sort -u | paste -sd, || true)
  [[ -n $gfx ]] && amd_gpu=1
fi
if [[ -f $rocm/.info/version ]]; then
  rocm_version=$(cat "$rocm/.info/version")
elif [[ -x $rocm/bin/hipconfig ]] || have hipconfig; then
  rocm_version="HIP $("$(command -v hipconfig || echo "$rocm/bin/hipconfig")" --version 2>/dev/null || true)"
else
  rocm_version=$(dpkg-query -W -f='${Package} ${Version}\n' 'libamdhip64*' 2>/dev/null | head -n 1 || true)
fi
rocm_where=$rocm; [[ -d $rocm ]] || rocm_where="distribution packages (no $rocm)"
rccl=${HETCCL_RCCL_LIB:-}
if [[ -z $rccl ]]; then
  for f in "$rocm"/lib/librccl.so.1 "$rocm"/lib/librccl.so; do [[ -e $f ]] && { rccl=$f; break; }; done
  [[ -z $rccl ]] && rccl=$(ldconfig -p 2>/dev/null | awk '/librccl\.so/ {print $NF; exit}' || true)
fi
torch_line=$(grep -E '^torch ' "$report/rocm.txt" || true)
[[ $torch_line == *" hip "[0-9]* ]] && torch_hip=$torch_line
nvidia=0; grep -q '^GPU [0-9]' "$report/rocm.txt" && nvidia=1

say "ROCm: $([[ $rocm_found == 1 ]] && echo "found ($rocm_where${rocm_version:+, $rocm_version})" || echo "not found")"
say "AMD GPU arch: ${gfx:-none found}"
say "RCCL: ${rccl:-not found}"
say "PyTorch: ${torch_line:-not importable}"
if [[ $amd_gpu == 0 ]]; then
  say "*** no AMD GPU/ROCm found on this host: no GPU agent (gfx...) in rocminfo$([[ -e /dev/kfd ]] || echo ", no /dev/kfd") ***"
  if [[ $mixed == 1 && $nvidia == 1 ]]; then
    say "mixed mode on an NVIDIA host: the CUDA side of the pair"
  elif [[ $mixed == 0 ]]; then
    dry_run=1
    say "nothing GPU will run; the report records what was found"
  fi
fi
gpu_count=0
if [[ $amd_gpu == 1 ]]; then
  gpu_count=$(grep -cE 'Name: +gfx' "$report/rocminfo.txt" || true)
elif [[ $nvidia == 1 ]]; then
  gpu_count=$(grep -c '^GPU [0-9]' "$report/rocm.txt" || true)
fi

# ---------------------------------------------------------------------------------------------- build
hip_clang=""
for c in "$rocm/llvm/bin/clang++" "$rocm/llvm/bin/clang"; do [[ -x $c ]] && { hip_clang=$c; break; }; done
if [[ $dry_run == 1 ]]; then
  skip configure "dry run"; skip build "dry run"
elif [[ $no_build == 1 ]]; then
  skip configure "--no-build: using $build_dir as it is"; skip build "--no-build"
else
  cfg=(-S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DHETCCL_BUILD_TESTS=ON)
  have ninja && [[ ! -f $build_dir/Makefile ]] && cfg+=(-G Ninja)
  [[ $amd_gpu == 1 || ( $rocm_found == 1 && $mixed == 0 ) ]] && cfg+=(-DHETCCL_REQUIRE_HIP=ON)
  [[ -n $hip_clang ]] && cfg+=("-DHETCCL_HIP_CLANG=$hip_clang")  # read by src/device/hip/CMakeLists.txt
  step configure 600 cmake "${cfg[@]}"
  keep_going=(); [[ -f $build_dir/build.ninja ]] && keep_going=(-- -k 0)
  step build 3600 cmake --build "$build_dir" -j "$(nproc)" "${keep_going[@]}"
fi

info=$build_dir/tools/hetccl-info perf=$build_dir/tools/hetccl-perf run=$build_dir/tools/hetccl-run
if [[ -x $info ]]; then step hetccl-info 60 "$info"; else skip hetccl-info "no hetccl-info in $build_dir"; fi
if [[ -x $info && $dry_run == 0 ]]; then
  step hetccl-info-hip 60 env HETCCL_DEVICE=hip HETCCL_DEBUG=INFO "$info"
fi
[[ -n $rccl && -z ${HETCCL_RCCL_LIB:-} ]] && export HETCCL_RCCL_LIB=$rccl

# ---------------------------------------------------------------------------------------------- tests
if [[ $dry_run == 1 || $skip_unit == 1 ]]; then
  skip unit-tests "$([[ $dry_run == 1 ]] && echo "dry run" || echo "--skip-unit")"
elif [[ -f $build_dir/CTestTestfile.cmake ]]; then
  step unit-tests 3600 ctest --test-dir "$build_dir" -LE 'fault|soak|netns' -j "$(nproc)" --timeout 300 \
    --output-on-failure --output-junit "$report/logs/ctest-unit.xml"
else
  skip unit-tests "no ctest tree in $build_dir"
fi

# The device type this host's ranks use; hetccl-perf puts its buffers on that vendor's GPU (--device hip|cuda).
device=hip; [[ $amd_gpu == 0 && $nvidia == 1 ]] && device=cuda
perf_device=(--device "$device")

if [[ $dry_run == 1 || $mixed == 1 ]]; then
  skip gpu-ctest "$([[ $dry_run == 1 ]] && echo "dry run" || echo "mixed mode")"
elif [[ -f $build_dir/CTestTestfile.cmake ]] &&
     (( $(ctest --test-dir "$build_dir" -N -L 'gpu|hip' 2>/dev/null | grep -cE 'Test +#' || true) > 0 )); then
  step gpu-ctest 3600 env HETCCL_TEST_REQUIRE_GPU=1 ctest --test-dir "$build_dir" -L 'gpu|hip' --timeout 300 \
    --output-on-failure --output-junit "$report/logs/ctest-gpu.xml"
else
  skip gpu-ctest "no test labelled gpu or hip in this build (the CUDA GPU tests need nvcc)"
fi

# hetccl-perf with device buffers on this host: every result checked (-c 1); -b/-e/-f sizes.
perf_args=(-b "$size_min" -e "$size_max" -f 4 -n 5 -w 2 -c 1)
layouts=()
if [[ $dry_run == 0 && $mixed == 0 ]]; then
  if (( gpu_count >= 2 )); then layouts+=("1domain:2:"); else layouts+=("1domain:1:"); fi  # RCCL: one rank per GPU
  layouts+=("2domains:2:--domains 2")                   # the stream pipeline (ranks may share a GPU)
fi
for spec in "${layouts[@]}"; do
  IFS=: read -r lname nranks lopts <<<"$spec"
  if [[ ! -x $perf || ! -x $run ]]; then skip "perf-$lname" "hetccl-perf / hetccl-run not built"; continue; fi
  # shellcheck disable=SC2086
  step "comm-$lname" 120 env HETCCL_DEVICE=$device "$run" -n "$nranks" $lopts --timeout 100 -- "$info" --comm
  for coll in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    # shellcheck disable=SC2086
    step "perf-$lname-$coll" 600 env HETCCL_DEVICE=$device "$run" -n "$nranks" $lopts --timeout 560 -- \
      "$perf" "$coll" "${perf_args[@]}" "${perf_device[@]}" --json "$report/logs/perf-$lname-$coll.json"
  done
done

# ---------------------------------------------------------------------------------------------- drop-in
dropin=$build_dir/dropin/librccl.so
if [[ $dry_run == 1 || $mixed == 1 || $skip_torch == 1 ]]; then
  why="mixed mode"; [[ $dry_run == 1 ]] && why="dry run"; [[ $skip_torch == 1 ]] && why="--skip-torch"
  skip dropin-torch "$why"
elif [[ -z $torch_hip ]]; then
  skip dropin-torch "no ROCm PyTorch importable with $py (${torch_line:-none})"
elif [[ ! -e $dropin ]]; then
  record dropin-torch FAIL 0 "$dropin was not built"
else
  site=$(sed -n 's/.* site \(.*\)$/\1/p' <<<"$torch_line")
  [[ -x $info ]] && step dropin-torch-check 120 "$info" --torch "$site"
  # Every torch.distributed collective, exact checks, LD_PRELOAD of the drop-in; 2 ranks: one domain when
  # there are 2 GPUs (RCCL inside), else two domains on the one GPU (hetccl's stream pipeline).
  ranks_env=(RANK_PRELOAD="$dropin" RANK_GPUS="$(( gpu_count > 0 ? gpu_count : 1 ))")
  (( gpu_count >= 2 )) || ranks_env+=(RANK_DOMAINS=2)
  step dropin-torch-collectives 900 env "${ranks_env[@]}" "$py" -m torch.distributed.run --standalone \
    --nproc_per_node 2 --no_python bash "$repo/tests/torch/rank_env.sh" "$py" "$repo/tests/torch/collectives.py"
fi

# ---------------------------------------------------------------------------------------------- mixed
if [[ $mixed == 1 ]]; then
  say "mixed mode: rank $rank of 2, rank 0's host $root, first port $port, peer ${peer:-unnamed}, device $device"
  if [[ ! -x $perf ]]; then
    record mixed FAIL 0 "hetccl-perf not built in $build_dir"
  elif [[ $dry_run == 1 ]]; then
    skip mixed "dry run"
  else
    export HETCCL_SECRET=$secret  # exported, never on a command line (logs record command lines)
    mixed_env=(OMPI_COMM_WORLD_RANK="$rank" OMPI_COMM_WORLD_SIZE=2
               OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1 HETCCL_DEVICE="$device")
    [[ -n $ifname ]] && mixed_env+=(HETCCL_SOCKET_IFNAME="$ifname")
    i=0
    # Both hosts run the same list in the same order; each benchmark is its own job on port P+i.
    for coll in all_reduce all_gather sendrecv; do
      step "mixed-$coll" 600 env "${mixed_env[@]}" HETCCL_COMM_ID="$root:$((port + i))" HETCCL_TIMEOUT=240 \
        "$perf" "$coll" "${perf_args[@]}" "${perf_device[@]}" --json "$report/logs/mixed-$coll.json"
      i=$((i + 1))
    done
    step mixed-comm 300 env "${mixed_env[@]}" HETCCL_COMM_ID="$root:$((port + i))" HETCCL_TIMEOUT=240 "$info" --comm
  fi
fi

# ---------------------------------------------------------------------------------------------- report
verdict="all steps passed"
exit_status=0
if (( failures > 0 )); then
  verdict="$failures step(s) FAILED"; exit_status=1
elif [[ $amd_gpu == 0 && $mixed == 0 ]]; then
  verdict="no AMD GPU/ROCm found: nothing GPU ran"; exit_status=3
fi
{
  echo "hetccl AMD verification report ($name)"
  echo "verdict:     $verdict (exit status $exit_status)"
  echo "mode:        $([[ $mixed == 1 ]] && echo "mixed, rank $rank, root $root:$port, peer ${peer:--}" || echo "single host")$([[ $dry_run == 1 ]] && echo ", dry run")"
  echo "host:        $host ($(uname -m))"
  echo "AMD GPU:     ${gfx:-none} (${gpu_count} device(s) seen)"
  echo "ROCm:        $([[ $rocm_found == 1 ]] && echo "${rocm_version:-version unknown}, $rocm_where" || echo "not found")"
  echo "RCCL:        ${rccl:-not found}"
  echo "PyTorch:     ${torch_line:-not importable}"
  echo "HIP clang:   ${hip_clang:-none under $rocm/llvm} (passed as HETCCL_HIP_CLANG)"
  echo "hetccl:      $(git -C "$repo" log -1 --format='%h %s' 2>/dev/null || echo unknown)"
  echo "build dir:   $build_dir"
  echo
  column -t -s $'\t' "$results" 2>/dev/null || cat "$results"
} >"$summary"
cat "$summary"
tarball="$out_dir/$name.tar.gz"
tar -czf "$tarball" -C "$out_dir" "$name"
echo
echo "verify-amd: report: $tarball"
echo "verify-amd: please attach it to an issue on the hetccl project's issue tracker, titled"
echo "            \"AMD verification: ${gfx:-no AMD GPU}, ROCm ${rocm_version:-?}\" (it holds logs and versions, no secrets)"
exit "$exit_status"
