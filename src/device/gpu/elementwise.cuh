// One elementwise kernel for every reduction-like operation: dst[i] = f(dst[i], src[i]). Reduce, scale
// and divide are functors over it (reduce_kernels.cuh). Single-source for CUDA and HIP.
//
// When dst and src are both 16-byte aligned, each thread moves 16-byte packs (one vector load per side),
// then the last count % pack elements go one by one; otherwise every element goes one by one. dst and src
// are the same buffer or do not overlap; each element is read before the same thread writes it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/gpu/element_ops.cuh"

namespace hetccl::gpu {

constexpr int kElementwiseThreads = 256;
constexpr unsigned kElementwiseMaxBlocks = 4096;  // grid-stride beyond this

template <typename T>
union Pack16 {
  static constexpr int kCount = 16 / sizeof(T);
  uint4 vector;
  T element[kCount];
};

/// The body of elementwiseKernel (a device function, so that other kernels can run it: the HIP plugin's
/// extern "C" kernels).
template <typename T, typename F>
__device__ inline void elementwiseLoop(T* dst, const T* src, size_t count, bool vectorized, F f) {
  const size_t first = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t done = 0;
  if (vectorized) {
    using P = Pack16<T>;
    const size_t packs = count / P::kCount;
    uint4* dstPacks = reinterpret_cast<uint4*>(dst);
    const uint4* srcPacks = reinterpret_cast<const uint4*>(src);
    for (size_t i = first; i < packs; i += stride) {
      P d, s;
      d.vector = dstPacks[i];
      s.vector = srcPacks[i];
#pragma unroll
      for (int k = 0; k < P::kCount; ++k) d.element[k] = f(d.element[k], s.element[k]);
      dstPacks[i] = d.vector;
    }
    done = packs * P::kCount;
  }
  for (size_t i = done + first; i < count; i += stride) dst[i] = f(dst[i], src[i]);
}

template <typename T, typename F>
__global__ void __launch_bounds__(kElementwiseThreads)
elementwiseKernel(T* dst, const T* src, size_t count, bool vectorized, F f) {
  elementwiseLoop(dst, src, count, vectorized, f);
}

#ifndef HETCCL_GPU_DEVICE_ONLY

/// Queues elementwiseKernel on `stream`; nothing for count == 0. Returns the launch's error.
template <typename T, typename F>
gpuError_t launchElementwise(T* dst, const T* src, size_t count, F f, gpuStream_t stream) {
  if (count == 0) return gpuSuccess;
  const bool vectorized = (reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16 == 0;
  const size_t work = vectorized ? count / Pack16<T>::kCount + Pack16<T>::kCount : count;
  size_t blocks = (work + kElementwiseThreads - 1) / kElementwiseThreads;
  if (blocks > kElementwiseMaxBlocks) blocks = kElementwiseMaxBlocks;
  elementwiseKernel<T, F><<<static_cast<unsigned>(blocks), kElementwiseThreads, 0, stream>>>(dst, src, count,
                                                                                            vectorized, f);
  return gpuGetLastError();
}

#endif  // HETCCL_GPU_DEVICE_ONLY

}  // namespace hetccl::gpu
