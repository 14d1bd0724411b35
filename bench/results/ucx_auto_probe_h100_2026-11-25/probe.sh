#!/usr/bin/env bash
# probe: does the executor's idle sleep limit ucx? raw UCX ceiling, host and device buffers.
set -u
OUT=${OUT:-./out}; B=.dev/build; mkdir -p $OUT/raw
export NCCL_NVLS_ENABLE=0 HETCCL_TIMEOUT=120
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export LD_LIBRARY_PATH=$PWD/$B:$PWD/.dev/ucx/lib:${LD_LIBRARY_PATH:-}
U=$PWD/.dev/ucx/lib/libucp.so.0
nproc > $OUT/raw/machine.txt; lscpu | grep 'Model name' >> $OUT/raw/machine.txt
for s in 1048576 16777216; do
  UCX_TLS=tcp .dev/ucxbin/ucx_perftest -t tag_bw -s $s -n 500 -p 13377 > $OUT/raw/perftest_srv_$s.txt 2>&1 &
  sleep 1; UCX_TLS=tcp timeout 60 .dev/ucxbin/ucx_perftest 127.0.0.1 -t tag_bw -s $s -n 500 -p 13377 > $OUT/raw/perftest_$s.txt 2>&1
  wait; echo "perftest $s: $(grep Final $OUT/raw/perftest_$s.txt)"
done
run() { local name=$1; shift; timeout -k 5 150 env "$@" > $OUT/raw/$name.txt 2>&1; echo "== $name rc=$?"; grep -E '^ +[0-9]+ ' $OUT/raw/$name.txt | awk '{print $1, $8, $12}'; }
cpu() { local name=$1; shift; run $name "$@" $B/tools/hetccl-run -n 2 --host-ids 2 --timeout 140 -- $B/tools/hetccl-perf all_reduce -b 64K -e 256M -f 4 -n 10 -w 3 -c 1; }
gpu() { local name=$1; shift; run $name "$@" HETCCL_DEVICE=cuda $B/tools/hetccl-run -n 2 --domains 2 --host-ids 2 --timeout 140 -- $B/tools/hetccl-perf all_reduce -G -b 16M -e 256M -f 4 -n 10 -w 3 -c 1; }
for r in 1 2; do
cpu cpu_tcp_$r HETCCL_UCX=off HETCCL_DEVICE=host
cpu cpu_tcp_nosleep_$r HETCCL_UCX=off HETCCL_DEVICE=host XNOSLEEP=1
cpu cpu_ucx_$r HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp HETCCL_DEVICE=host
cpu cpu_ucx_nosleep_$r HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp HETCCL_DEVICE=host XNOSLEEP=1
done
gpu gpu_tcp HETCCL_UCX=off
gpu gpu_ucx HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp
gpu gpu_ucx_nosleep HETCCL_UCX=on HETCCL_UCX_LIB=$U UCX_TLS=tcp XNOSLEEP=1
tar czf $OUT/raw.tgz -C $OUT raw && rm -rf $OUT/raw
