#!/usr/bin/env bash
set -u
OUT=${OUT:-./out}; B=.dev/build; mkdir -p $OUT/raw
export LD_LIBRARY_PATH=$PWD/$B:$PWD/.dev/ucx/lib
U=$PWD/.dev/ucx/lib/libucp.so.0
P=.dev/ucxbin/ucx_perftest
port=13400
pt() { # pt LABEL VARS... -- perftest args
  local label=$1; shift; local vars=(); while [ "$1" != -- ]; do vars+=("$1"); shift; done; shift
  port=$((port+1))
  env UCX_TLS=tcp "${vars[@]}" $P -t tag_bw -n 200 -p $port "$@" > $OUT/raw/srv_$label.txt 2>&1 & sleep 0.5
  echo "perftest $label: $(env UCX_TLS=tcp "${vars[@]}" timeout 60 $P 127.0.0.1 -t tag_bw -n 200 -p $port "$@" 2>&1 | grep -E 'Final|rror' | awk '{print $6}')"; wait
}
for r in 1 2; do for s in 1048576 16777216; do
  pt "none_$s" X=1 -- -s $s
  pt "peer_$s" X=1 -- -s $s -e
  pt "peer_put_$s" UCX_RNDV_SCHEME=put_zcopy -- -s $s -e
  pt "peer_proto_$s" UCX_PROTO_ENABLE=y -- -s $s -e
done; done
h() { local label=$1; shift; echo "== $label"; for c in broadcast sendrecv; do env "$@" HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp HETCCL_DEVICE=host HETCCL_TIMEOUT=60 $B/tools/hetccl-run -n 2 --host-ids 2 --timeout 100 -- $B/tools/hetccl-perf $c -b 1M -e 64M -f 4 -n 20 -w 3 -c 1 2>&1 | grep -E '^ +[0-9]' | awk -v c=$c '{printf "%s %s %s/%s  ", c, $1, $8, $12} END {print ""}'; done; }
for r in 1 2; do
h "hetccl ucx peer" X=1
h "hetccl ucx none" XNOERR=1 LD_LIBRARY_PATH=$PWD/.dev/noerrlib:$LD_LIBRARY_PATH
h "hetccl ucx peer put_zcopy" UCX_RNDV_SCHEME=put_zcopy
done
