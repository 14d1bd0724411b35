#!/usr/bin/env bash
set -u
B=.dev/build
export LD_LIBRARY_PATH=$PWD/$B:$PWD/.dev/ucx/lib
U=$PWD/.dev/ucx/lib/libucp.so.0
h() { local label=$1; shift; echo "== $label"; for c in broadcast sendrecv all_reduce; do env "$@" HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp HETCCL_DEVICE=host HETCCL_TIMEOUT=60 $B/tools/hetccl-run -n 2 --host-ids 2 --timeout 100 -- $B/tools/hetccl-perf $c -b 1M -e 64M -f 4 -n 20 -w 3 -c 1 2>&1 | grep -E '^ +[0-9]|rror' | awk -v c=$c '{printf "%s %s %s/%s  ", c, $1, $8, $12} END {print ""}'; done; }
for r in 1 2; do
h "committed" X=1
h "early payload receive" XEARLY=1 LD_LIBRARY_PATH=$PWD/.dev/earlylib:$LD_LIBRARY_PATH
h "8 MiB pieces" X=1 LD_LIBRARY_PATH=$PWD/.dev/bigpiecelib:$LD_LIBRARY_PATH
h "8 MiB pieces + early" XEARLY=1 LD_LIBRARY_PATH=$PWD/.dev/bigpiecelib:$LD_LIBRARY_PATH
done
