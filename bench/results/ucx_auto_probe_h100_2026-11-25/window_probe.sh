#!/usr/bin/env bash
# HETCCL_UCX_PIECES_IN_FLIGHT: how many 1 MiB pieces per ucx connection are posted to UCX at once.
# Two ranks as two "hosts" over loopback, UCX_TLS=tcp; host buffers (sendrecv, broadcast, all_reduce) and,
# where a GPU is present, device buffers (all_reduce through host staging in pieces); the windows
# interleaved, ROUNDS rounds. Run from the repository root:
#   OUT=$OUT BUILD=.dev/build UCX_DIR=.dev/ucx bash bench/run_ucx_window_probe.sh
set -u -o pipefail
OUT=${OUT:-./out}; BUILD=${BUILD:-build}; ROUNDS=${ROUNDS:-2}; WINDOWS=${WINDOWS:-"1 2 4 8 1024"}
RAW=$OUT/raw; mkdir -p "$RAW"
export LD_LIBRARY_PATH=$(cd "$BUILD" && pwd):$(cd "${UCX_DIR:?}/lib" && pwd)
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
U=$(cd "$UCX_DIR/lib" && pwd)/libucp.so.0
{ date -u; nproc; lscpu | sed -n 's/^Model name: *//p'; uname -r; nvidia-smi -L 2>/dev/null; echo "hetccl $(git rev-parse --short HEAD 2>/dev/null)"; } >"$OUT/machine.txt"
run() {  # run NAME COLL DEVICE_ARGS... (env: W)
  local name=$1 coll=$2; shift 2
  timeout -k 5 150 env HETCCL_UCX_PIECES_IN_FLIGHT="$W" HETCCL_UCX=on HETCCL_UCX_LIB="$U" UCX_TLS=tcp HETCCL_TIMEOUT=60 \
    NCCL_NVLS_ENABLE=0 "$@" >"$RAW/$name.txt" 2>&1
  echo "== $name rc=$?"; grep -E '^ +[0-9]+ ' "$RAW/$name.txt" | awk '{printf "%s %s/%s  ", $1, $8, $12} END {print ""}'
}
gpu=0; nvidia-smi -L >/dev/null 2>&1 && gpu=1
for r in $(seq 1 "$ROUNDS"); do
  for W in $WINDOWS; do
    for c in sendrecv broadcast all_reduce; do
      run "${c}_w${W}_r$r" $c HETCCL_DEVICE=host "$BUILD/tools/hetccl-run" -n 2 --host-ids 2 --timeout 140 -- \
        "$BUILD/tools/hetccl-perf" $c -b 1M -e 64M -f 4 -n 20 -w 3 -c 1
    done
    [ $gpu = 1 ] && run "gpu_all_reduce_w${W}_r$r" all_reduce HETCCL_DEVICE=cuda "$BUILD/tools/hetccl-run" -n 2 --domains 2 \
      --host-ids 2 --timeout 140 -- "$BUILD/tools/hetccl-perf" all_reduce -G -b 16M -e 256M -f 4 -n 10 -w 3 -c 1
  done
done
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
