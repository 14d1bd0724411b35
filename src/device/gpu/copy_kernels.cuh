// The kernel behind batched device-to-device copies (the plugins' memcpyBatchAsync): one launch copies up
// to kCopyRangesPerLaunch ranges whose sources and destinations the device can address (its own memory
// and other processes' allocations mapped through IPC). The runtimes' own copies cost a few microseconds
// each whatever their size (8192 copies of 256 KiB: ~64 GB/s on an H200, where one kernel over the same
// list moves ~2 TB/s; bench/results/rma_ipc_gpu_2026-11-25/copy_probe). Ranges must not overlap each
// other's destinations (the plugin contract). Single-source for CUDA and HIP.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/gpu/gpu_alias.hpp"

namespace hetccl::gpu {

/// Ranges per launch: three 8-byte words each, so that a batch stays inside the 4 KiB of kernel
/// parameters every CUDA and HIP device takes.
inline constexpr unsigned kCopyRangesPerLaunch = 160;

/// One launch's ranges, passed by value (kernel parameter space).
struct CopyRangeBatch {
  uint64_t dst[kCopyRangesPerLaunch];
  uint64_t src[kCopyRangesPerLaunch];
  uint64_t bytes[kCopyRangesPerLaunch];
  unsigned count;
};
static_assert(sizeof(CopyRangeBatch) <= 4096 - 64);

/// Copies [begin, end) of one range with the widest word both addresses allow (16, 4 or 1 bytes);
/// `begin` is a multiple of 16. Threads of the block stride over it.
__device__ inline void copySpan(unsigned char* dst, const unsigned char* src, uint64_t begin, uint64_t end) {
  const uintptr_t both = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src);
  uint64_t at = begin;
  if ((both & 15) == 0) {
    const uint64_t words = (end - begin) / 16;
    const uint4* s = reinterpret_cast<const uint4*>(src + begin);
    uint4* d = reinterpret_cast<uint4*>(dst + begin);
    for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) d[i] = s[i];
    at = begin + words * 16;
  } else if ((both & 3) == 0) {
    const uint64_t words = (end - begin) / 4;
    const uint32_t* s = reinterpret_cast<const uint32_t*>(src + begin);
    uint32_t* d = reinterpret_cast<uint32_t*>(dst + begin);
    for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) d[i] = s[i];
    at = begin + words * 4;
  }
  for (uint64_t i = at + threadIdx.x; i < end; i += blockDim.x) dst[i] = src[i];
}

/// Block (x, y) copies share x of range y: gridDim.x blocks split each range in 16-byte-aligned shares.
__device__ inline void runCopyRanges(const CopyRangeBatch& batch) {
  const unsigned r = blockIdx.y;
  if (r >= batch.count) return;
  const uint64_t bytes = batch.bytes[r];
  const uint64_t share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const uint64_t begin = share * blockIdx.x;
  if (begin >= bytes) return;
  const uint64_t end = begin + share < bytes ? begin + share : bytes;
  copySpan(reinterpret_cast<unsigned char*>(batch.dst[r]), reinterpret_cast<const unsigned char*>(batch.src[r]),
           begin, end);
}

__global__ void copyRangesKernel(CopyRangeBatch batch) { runCopyRanges(batch); }

#ifndef HETCCL_GPU_DEVICE_ONLY
inline constexpr unsigned kCopyThreads = 512;
/// Bytes a block copies at most per range before the range gets another block (up to kCopyMaxBlocksPerRange).
inline constexpr uint64_t kCopyBytesPerBlock = 64 << 10;
inline constexpr unsigned kCopyMaxBlocksPerRange = 64;

inline gpuError_t preloadCopyKernel() {
  gpuFuncAttributes attributes;
  return gpuFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&copyRangesKernel));
}

/// Queues one copyRangesKernel over `batch` (count in [1, kCopyRangesPerLaunch]) on `stream`.
inline gpuError_t launchCopyRanges(const CopyRangeBatch& batch, gpuStream_t stream) {
  uint64_t largest = 0;
  for (unsigned i = 0; i < batch.count; ++i) largest = batch.bytes[i] > largest ? batch.bytes[i] : largest;
  uint64_t perRange = (largest + kCopyBytesPerBlock - 1) / kCopyBytesPerBlock;
  perRange = perRange < 1 ? 1 : perRange > kCopyMaxBlocksPerRange ? kCopyMaxBlocksPerRange : perRange;
  copyRangesKernel<<<dim3(static_cast<unsigned>(perRange), batch.count), kCopyThreads, 0, stream>>>(batch);
  return gpuGetLastError();
}
#endif  // HETCCL_GPU_DEVICE_ONLY

}  // namespace hetccl::gpu
