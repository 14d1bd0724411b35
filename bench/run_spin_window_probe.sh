#!/usr/bin/env bash
# The executor's idle spin window: host-buffer all_reduce with libhetccl before and after (two builds of
# the library, same tools), interleaved, over tcp and ucx between two "hosts" and over shm on one host.
# Run from the repository root:
#   OUT=$OUT BUILD=.dev/build OLD_LIB=.dev/oldlib UCX_DIR=.dev/ucx bash bench/run_spin_window_probe.sh
#   BUILD    a hetccl build (tools/hetccl-run, tools/hetccl-perf, libhetccl.so.0: the "new" library)
#   OLD_LIB  a directory with the other libhetccl.so.0 (found first through LD_LIBRARY_PATH)
#   UCX_DIR  optional: lib/ with libucp.so.0 and what it needs
#   ROUNDS (2), ITERS (50), MIN/MAX (8K/16M, x4)
set -u -o pipefail
OUT=${OUT:-./out}; BUILD=${BUILD:-build}; OLD_LIB=${OLD_LIB:?}; ROUNDS=${ROUNDS:-2}; ITERS=${ITERS:-50}
MIN=${MIN:-8K}; MAX=${MAX:-16M}
RAW=$OUT/raw; mkdir -p "$RAW"
BASE_LD=$(cd "$BUILD" && pwd)
UCX_LIB=""
if [ -n "${UCX_DIR:-}" ] && [ -e "$UCX_DIR/lib/libucp.so.0" ]; then
  BASE_LD=$BASE_LD:$(cd "$UCX_DIR/lib" && pwd); UCX_LIB=$(cd "$UCX_DIR/lib" && pwd)/libucp.so.0
fi
OLD=$(cd "$OLD_LIB" && pwd)
{ date -u; nproc; lscpu | sed -n 's/^Model name: *//p'; uname -r; echo "hetccl $(git rev-parse --short HEAD 2>/dev/null)"; } >"$OUT/machine.txt"
run() {  # run NAME LIBDIR VAR=VALUE... -- hetccl-run args
  local name=$1 lib=$2; shift 2
  local vars=(); while [ "$1" != -- ]; do vars+=("$1"); shift; done; shift
  timeout -k 5 120 env HETCCL_TIMEOUT=60 HETCCL_DEVICE=host LD_LIBRARY_PATH="$lib" "${vars[@]}" \
    "$BUILD/tools/hetccl-run" "$@" --timeout 100 -- "$BUILD/tools/hetccl-perf" all_reduce -b "$MIN" -e "$MAX" -f 4 \
    -n "$ITERS" -w 5 -c 1 >"$RAW/$name.txt" 2>&1
  echo "== $name rc=$?"; grep -E '^ +[0-9]+ ' "$RAW/$name.txt" | awk '{printf "%s %s/%s  ", $1, $8, $12} END {print ""}'
}
for r in $(seq 1 "$ROUNDS"); do
  for v in old new; do
    lib=$BASE_LD; [ $v = old ] && lib=$OLD:$BASE_LD
    run "tcp_${v}_r$r" "$lib" HETCCL_UCX=off -- -n 2 --host-ids 2
    run "shm2_${v}_r$r" "$lib" X=1 -- -n 2
    run "shm4_${v}_r$r" "$lib" X=1 -- -n 4
    [ -n "$UCX_LIB" ] && run "ucx_${v}_r$r" "$lib" HETCCL_UCX=on HETCCL_UCX_LIB="$UCX_LIB" UCX_TLS=tcp -- -n 2 --host-ids 2
  done
done
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
