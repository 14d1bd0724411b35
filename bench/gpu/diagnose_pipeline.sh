#!/usr/bin/env bash
# Diagnoses the cross-domain stream pipeline on a 2-GPU machine: which device path each rank uses, the
# all-reduce time for a few chunk sizes, and (when Nsight Systems is installed) a profile of rank 0 with
# the CUDA API and copy summaries (time per runtime call, copy throughput). Everything goes to one file.
#   usage: OUT=dir bash bench/gpu/diagnose_pipeline.sh [build-dir]
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-diag}
out=${OUT:-.}/diagnose.txt
export NCCL_NVLS_ENABLE=0 HETCCL_DEVICE=cuda
exec >"$out" 2>&1
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETCCL_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j16 --target hetccl-cuda hetccl-perf hetccl-run | tail -2
export HETCCL_CUDA_PLUGIN=$build/libhetccl-cuda.so
run=$build/tools/hetccl-run
perf=$build/tools/hetccl-perf
echo "== device path"
HETCCL_DEBUG=INFO timeout 60 "$run" -n 2 --domains 2 -- "$perf" all_reduce -G -b 64M -e 64M -n 3 -w 1 2>&1 |
  grep -E "device calls|GPU rings|flag waits|stream flag|busbw|^ +[0-9]"
# VARIANTS: "chunk:min-chunk:pair-exchange-bytes:ranks:max-connections" (default below).
for v in ${VARIANTS:-4M:64K:2G:2:8 4M:512K:2G:2:8}; do
  IFS=: read -r chunk minchunk exch ranks conns <<<"$v"
  echo "== chunk=$chunk min=$minchunk pair-exchange=$exch ranks=$ranks CUDA_DEVICE_MAX_CONNECTIONS=$conns (2 domains)"
  layout=(); [ "$ranks" = 4 ] && layout=(--layout blocks)
  CUDA_DEVICE_MAX_CONNECTIONS=$conns HETCCL_GPU_MIN_CHUNK_BYTES=$minchunk \
  HETCCL_GPU_CHUNK_BYTES=$chunk HETCCL_GPU_PAIR_EXCHANGE_BYTES=$exch timeout 120 "$run" -n "$ranks" --domains 2 \
    "${layout[@]}" -- "$perf" all_reduce -G -b ${MIN_BYTES:-1M} -e ${MAX_BYTES:-1G} -f 4 -n 10 -w 3 | grep -E "^ +[0-9]"
done
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "== nsys: ${nsys:-not found}"
if [ -n "$nsys" ]; then
  prof=$(mktemp -d)
  timeout 150 "$run" -n 2 --domains 2 -- bash -c "if [ \"\$HETCCL_RANK\" = 0 ]; then exec $nsys profile -t cuda,osrt -o $prof/r0 --force-overwrite true $perf all_reduce -G -b 256M -e 256M -n 5 -w 2; else exec $perf all_reduce -G -b 256M -e 256M -n 5 -w 2; fi" | grep -E "^ +[0-9]"
  "$nsys" stats --report cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,cuda_gpu_kern_sum --format table "$prof/r0.nsys-rep" 2>&1 | cut -c1-220 | head -120
fi
