#!/usr/bin/env bash
# Half and bfloat16 all-reduce between two "hosts" (host buffers and device buffers staged in pieces),
# two libhetccl builds interleaved: OLD_LIB (portable 16-bit host kernels) and BUILD's (AVX2/F16C), float as
# the reference. Run from the repository root:
#   OUT=$OUT BUILD=.dev/build OLD_LIB=.dev/oldlib bash bench/run_sixteen_bit_probe.sh
#   ROUNDS (2), TYPES ("half bfloat16 float")
set -u -o pipefail
OUT=${OUT:-./out}; BUILD=${BUILD:-build}; OLD_LIB=${OLD_LIB:?}; ROUNDS=${ROUNDS:-2}; TYPES=${TYPES:-"half bfloat16 float"}
RAW=$OUT/raw; mkdir -p "$RAW"
NEW=$(cd "$BUILD" && pwd); OLD=$(cd "$OLD_LIB" && pwd)
CUDA=""; [ -d /usr/local/cuda/lib64 ] && CUDA=:/usr/local/cuda/lib64
{ date -u; nproc; lscpu | sed -n 's/^Model name: *//p'; grep -o -m1 'f16c' /proc/cpuinfo; nvidia-smi -L 2>/dev/null; } >"$OUT/machine.txt"
gpu=0; nvidia-smi -L >/dev/null 2>&1 && gpu=1
run() {  # run NAME LIB DEVICE TYPE
  local name=$1 lib=$2 dev=$3 type=$4 args=(-n 2 --host-ids 2) perf=(-b 16M -e 256M -f 4 -n 10 -w 3 -c 1 -d "$4")
  [ "$dev" = cuda ] && args+=(--domains 2) && perf+=(-G)
  timeout -k 5 200 env LD_LIBRARY_PATH="$lib:$NEW$CUDA" HETCCL_DEVICE="$dev" HETCCL_UCX=off HETCCL_TIMEOUT=60 \
    NCCL_NVLS_ENABLE=0 "$BUILD/tools/hetccl-run" "${args[@]}" --timeout 190 -- "$BUILD/tools/hetccl-perf" all_reduce \
    "${perf[@]}" >"$RAW/$name.txt" 2>&1
  echo "== $name rc=$?"; grep -E '^ +[0-9]+ ' "$RAW/$name.txt" | awk '{printf "%s %s/%s  ", $1, $8, $12} END {print ""}'
}
devs="host"; [ $gpu = 1 ] && devs="host cuda"
for r in $(seq 1 "$ROUNDS"); do
  for dev in $devs; do
    for t in $TYPES; do
      run "${dev}_${t}_old_r$r" "$OLD" "$dev" "$t"
      run "${dev}_${t}_new_r$r" "$NEW" "$dev" "$t"
    done
  done
done
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
