export LD_LIBRARY_PATH=$PWD/.dev/ucx/lib
B=.dev/ucxmb/ucx_bidir
run() { UCX_TLS=tcp timeout 60 $B server 127.0.0.1 $1 ${@:2} > /dev/null 2>&1 & sleep 0.3; UCX_TLS=tcp timeout 60 $B client 127.0.0.1 $1 ${@:2}; wait; }
p=15000
for r in 1 2 3; do for cfg in "1048576 1000 1 1 0 4 0" "1048576 1000 1 1 0 4 1" "1048576 1000 1 1 1 4 1" "16777216 100 1 1 0 4 0" "16777216 100 1 1 0 4 1"; do p=$((p+2)); run $p $cfg 2>&1 | grep client; done; done
