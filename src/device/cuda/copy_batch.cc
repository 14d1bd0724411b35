// Batched copies of the CUDA plugin (memcpyBatchAsync, contract in src/device/base/gpu_plugin.h).
// The runtime's copies cost a few microseconds each whatever their size, so many small device-to-device
// copies (an RMA transfer of KV-cache blocks: thousands of ranges of tens to hundreds of KiB) go as one
// kernel over the range list (src/device/gpu/copy_kernels.cuh) where the device can address every byte:
// all sources inside one allocation and all destinations inside one allocation, both device memory of the
// current device (its own, or another process's mapped through IPC). Anything else (host memory, several
// allocations, another device, large ranges) takes cudaMemcpyBatchAsync, or one copy at a time where the
// driver refuses that.
#include <atomic>

#include "device/cuda/driver_entry.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {
namespace {

/// Above this average size per range the copy engines are as fast as the kernel, and leave the SMs alone.
constexpr size_t kKernelMaxAverageBytes = 4u << 20;

/// Whether every [ptrs[i], ptrs[i] + sizes[i]) lies inside the allocation of ptrs[0], device memory of the
/// current device.
bool inOneDeviceAllocation(const void* const* ptrs, const size_t* sizes, size_t count, int device) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptrs[0]) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (attributes.type != cudaMemoryTypeDevice || attributes.device != device) return false;
  void* base = nullptr;
  size_t bytes = 0;
  if (allocationRange(ptrs[0], &base, &bytes) != HETCCL_GPU_OK) return false;
  const auto lo = reinterpret_cast<uintptr_t>(base), hi = lo + bytes;
  for (size_t i = 0; i < count; ++i) {
    const auto p = reinterpret_cast<uintptr_t>(ptrs[i]);
    if (p < lo || p > hi || sizes[i] > hi - p) return false;
  }
  return true;
}

/// Whether the copies should go as copyRangesKernel launches.
bool byKernel(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count) {
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) total += sizes[i];
  if (count < 2 || total / count > kKernelMaxAverageBytes) return false;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return inOneDeviceAllocation(srcs, sizes, count, device) &&
         inOneDeviceAllocation(const_cast<const void* const*>(dsts), sizes, count, device);
}

}  // namespace

int memcpyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, void* stream) {
  if (count && (!dsts || !srcs || !sizes)) return fail(HETCCL_GPU_ERR_ARGUMENT, "memcpyBatchAsync", "null array");
  size_t nonEmpty = 0;
  for (size_t i = 0; i < count; ++i) nonEmpty += sizes[i] != 0;
  gpuStream_t s = static_cast<gpuStream_t>(stream);
  if (nonEmpty == count && byKernel(dsts, srcs, sizes, count)) {
    if (const int rc = preloadKernelsOnce()) return rc;  // loaded before any wait (flags.cc): a no-op by now
    return check(launchCopyRangesKernel(dsts, srcs, sizes, count, s), "copyRangesKernel launch");
  }
  // cudaMemcpyBatchAsync (12.8+) takes no zero-sized copies and no null stream; a driver that refuses it
  // (cudaErrorNotSupported and the like) is remembered and the copies go one by one.
  static std::atomic<bool> batchRefused{false};
  if (nonEmpty == count && count > 1 && stream && !batchRefused.load(std::memory_order_relaxed)) {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t attrIndex = 0;
    const cudaError_t err = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &attrIndex, 1, s);
    if (err == cudaSuccess) return HETCCL_GPU_OK;
    (void)cudaGetLastError();
    batchRefused.store(true, std::memory_order_relaxed);
    CUDA_PLUGIN_INFO("cudaMemcpyBatchAsync refused (%s): batched copies go one by one", cudaGetErrorString(err));
  }
  for (size_t i = 0; i < count; ++i)
    if (const int rc = memcpyAsync(dsts[i], srcs[i], sizes[i], stream)) return rc;
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::cuda_plugin
