cd /work/main
export HETCCL_LIBRARY=$PWD/build-kv/libhetccl.so
for i in 1 2 3; do for v in shm tcp; do hid=""; [[ $v == tcp ]] && hid="--host-ids 2"
  echo "$(date -u +%T) $v run$i load $(cut -d' ' -f1-3 /proc/loadavg)" >> bench/results/kv_transfer_cpu_2026-11-24_raw/progress
  timeout 500 build-kv/tools/hetccl-run -n 2 $hid --timeout 480 -- /usr/bin/python3 bench/kv_transfer_bench.py --device cpu --heads 32 --blocks 256 --json bench/results/kv_transfer_cpu_2026-11-24_raw/${v}_run$i.json --md bench/results/kv_transfer_cpu_2026-11-24_raw/${v}_run$i.md > bench/results/kv_transfer_cpu_2026-11-24_raw/${v}_run$i.log 2>&1
  echo "$v run$i rc=$?" >> bench/results/kv_transfer_cpu_2026-11-24_raw/progress
done; done
echo done >> bench/results/kv_transfer_cpu_2026-11-24_raw/progress
