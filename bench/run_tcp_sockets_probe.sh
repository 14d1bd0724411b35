#!/usr/bin/env bash
# HETCCL_TCP_SOCKETS (sockets and threads per peer and direction of the tcp transport): two ranks as two
# "hosts" over loopback, host buffers and, where a GPU is present, device buffers staged in pieces;
# the socket counts interleaved, ROUNDS rounds. Run from the repository root:
#   OUT=$OUT BUILD=.dev/build bash bench/run_tcp_sockets_probe.sh
set -u -o pipefail
OUT=${OUT:-./out}; BUILD=${BUILD:-build}; ROUNDS=${ROUNDS:-2}; COUNTS=${COUNTS:-"1 2 4 8"}
RAW=$OUT/raw; mkdir -p "$RAW"
export LD_LIBRARY_PATH=$(cd "$BUILD" && pwd)
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
{ date -u; nproc; lscpu | sed -n 's/^Model name: *//p'; uname -r; nvidia-smi -L 2>/dev/null; } >"$OUT/machine.txt"
run() {  # run NAME HETCCL_RUN_ARGS... -- PERF_ARGS...
  local name=$1; shift
  timeout -k 5 200 env HETCCL_UCX=off HETCCL_TIMEOUT=60 NCCL_NVLS_ENABLE=0 "$BUILD/tools/hetccl-run" "$@" \
    >"$RAW/$name.txt" 2>&1
  echo "== $name rc=$?"; grep -E '^ +[0-9]+ ' "$RAW/$name.txt" | awk '{printf "%s %s/%s  ", $1, $8, $12} END {print ""}'
}
gpu=0; nvidia-smi -L >/dev/null 2>&1 && gpu=1
for r in $(seq 1 "$ROUNDS"); do
  for k in $COUNTS; do
    HETCCL_TCP_SOCKETS=$k HETCCL_DEVICE=host run "host_s${k}_r$r" -n 2 --host-ids 2 --timeout 190 -- \
      "$BUILD/tools/hetccl-perf" all_reduce -b 64K -e 256M -f 4 -n 10 -w 3 -c 1
    [ $gpu = 1 ] && HETCCL_TCP_SOCKETS=$k HETCCL_DEVICE=cuda run "gpu_s${k}_r$r" -n 2 --domains 2 --host-ids 2 \
      --timeout 190 -- "$BUILD/tools/hetccl-perf" all_reduce -G -b 16M -e 256M -f 4 -n 10 -w 3 -c 1
  done
done
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
