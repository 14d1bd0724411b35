#!/usr/bin/env bash
# hetccl-perf with HIP device buffers on a host whose HIP runtime sees no GPU (CI: Debian's libamdhip64.so.5,
# no AMD GPU): every form (--device hip, -G with HETCCL_DEVICE=hip, -G with HETCCL_DEVICE=auto) must fail
# promptly, exit nonzero through hetccl-run, and say why (hipGetDeviceCount's error). Exit 77 (skipped)
# where no HIP runtime is installed; a host with a HIP device is not this case (passes, saying so).
set -u
build=$1
run=$build/tools/hetccl-run perf=$build/tools/hetccl-perf
fail() { echo "FAIL: $*"; exit 1; }

# case NAME HETCCL_DEVICE PATTERN PERF-ARGS...: runs one rank; PATTERN must be in the output.
case_() {
  local name=$1 device=$2 pattern=$3; shift 3
  local out rc=0
  out=$(env HETCCL_DEVICE="$device" HETCCL_TIMEOUT=30 timeout 90 "$run" -n 1 --timeout 60 -- \
        "$perf" all_reduce -b 8 -e 8 -n 1 -w 0 "$@" 2>&1) || rc=$?
  echo "== $name (HETCCL_DEVICE=$device hetccl-perf ... $*): exit status $rc"
  echo "$out"
  if grep -q "cannot open the HIP runtime library" <<<"$out"; then echo "SKIP: no HIP runtime on this host"; exit 77; fi
  if [[ $rc == 0 ]]; then echo "a GPU is present: not the no-device case"; exit 0; fi
  [[ $rc == 124 || $rc == 137 ]] && fail "$name: timed out"
  grep -qE -- "$pattern" <<<"$out" || fail "$name: no line matching '$pattern'"
  grep -q "usage: hetccl-perf" <<<"$out" && fail "$name: the usage text was printed (an argument error?)"
  return 0
}

nodev='hipGetDeviceCount (failed: [^ ]+ \(HIP error [0-9]+, [^)]*libamdhip64[^)]*\)|gave 0)'
case_ device-hip auto "^hetccl-perf: --device hip: $nodev" --device hip
case_ G-hetccl-device-hip hip "^hetccl-perf: --device gpu: HETCCL_DEVICE=hip: --device hip: $nodev" -G
case_ device-gpu-hetccl-device-hip hip "--device gpu: HETCCL_DEVICE=hip: --device hip: $nodev" --device gpu
# auto: CUDA first (no GPU here either, or no CUDA runtime), then HIP: both reasons named.
out_auto_pattern="--device gpu: HETCCL_DEVICE=auto and neither GPU runtime is usable \(CUDA: .*"
case_ G-auto auto "$out_auto_pattern" -G
echo "PASS"
