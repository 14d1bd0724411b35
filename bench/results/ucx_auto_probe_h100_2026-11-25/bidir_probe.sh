#!/usr/bin/env bash
# Where is the ucx gap: UCX itself both ways at once, or hetccl's use of it?
set -u
OUT=${OUT:-./out}; B=.dev/build; mkdir -p $OUT/raw
export LD_LIBRARY_PATH=$PWD/$B:$PWD/.dev/ucx/lib
U=$PWD/.dev/ucx/lib/libucp.so.0
P=.dev/ucxbin/ucx_perftest
for s in 1048576 16777216; do
  # one way
  UCX_TLS=tcp $P -t tag_bw -s $s -n 300 -p 13371 > $OUT/raw/uni_srv_$s.txt 2>&1 & sleep 0.5
  UCX_TLS=tcp timeout 60 $P 127.0.0.1 -t tag_bw -s $s -n 300 -p 13371 > $OUT/raw/uni_$s.txt 2>&1; wait
  echo "uni $s: $(grep Final $OUT/raw/uni_$s.txt)"
  # both ways at once: two pairs in opposite roles
  UCX_TLS=tcp $P -t tag_bw -s $s -n 300 -p 13372 > $OUT/raw/bi_srvA_$s.txt 2>&1 &
  UCX_TLS=tcp $P -t tag_bw -s $s -n 300 -p 13373 > $OUT/raw/bi_srvB_$s.txt 2>&1 & sleep 0.5
  UCX_TLS=tcp timeout 60 $P 127.0.0.1 -t tag_bw -s $s -n 300 -p 13372 > $OUT/raw/biA_$s.txt 2>&1 &
  UCX_TLS=tcp timeout 60 $P 127.0.0.1 -t tag_bw -s $s -n 300 -p 13373 > $OUT/raw/biB_$s.txt 2>&1; wait
  echo "bi $s: A $(grep Final $OUT/raw/biA_$s.txt | awk '{print $6}') B $(grep Final $OUT/raw/biB_$s.txt | awk '{print $6}')"
done
for c in broadcast sendrecv; do for v in "HETCCL_UCX=off" "HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp"; do
  echo "== $c $v"; env $v HETCCL_DEVICE=host HETCCL_TIMEOUT=60 $B/tools/hetccl-run -n 2 --host-ids 2 --timeout 100 -- $B/tools/hetccl-perf $c -b 1M -e 64M -f 4 -n 20 -w 3 -c 1 2>&1 | grep -E '^ +[0-9]' | awk '{printf "%s %s/%s  ", $1, $8, $12} END {print ""}'
done; done
tar czf $OUT/raw.tgz -C $OUT raw && rm -rf $OUT/raw
