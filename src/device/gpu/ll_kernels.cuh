// The latency path's kernel (hetcclGpuPlugin_t::llAllReduce): ll_protocol.cuh run by a grid of ll::launchShape
// (a lane per line, then a lane per peer header word), with the element arithmetic of reduce_kernels.cuh
// applied to 8 bytes of data at a time. Single-source for CUDA and HIP (the HIP plugin's kernels.hip wraps
// llAllReduceBody in extern "C" kernels; the launcher below is CUDA's).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/gpu/ll_protocol.cuh"
#include "device/gpu/reduce_kernels.cuh"

namespace hetccl::gpu {

// What CUDA and HIP spell differently (the HIP plugin compiles this freestanding: gpu_alias.hpp).
#if defined(HETCCL_HIP_FREESTANDING) || defined(__HIP_PLATFORM_AMD__)
#define HETCCL_LL_SHARED __attribute__((shared))
__device__ inline unsigned long long llAtomicAdd(unsigned long long* p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
__device__ inline void llBlockBarrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ inline void llDeviceFence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
#else
#define HETCCL_LL_SHARED __shared__
__device__ inline unsigned long long llAtomicAdd(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
__device__ inline void llBlockBarrier() { __syncthreads(); }
__device__ inline void llDeviceFence() { __threadfence(); }
#endif

/// Env of ll::allReduce on a GPU: volatile 64-bit accesses (the boards are pinned host memory; volatile
/// keeps every poll a real load), the block's barrier, the finished blocks counted in seq[1].
struct LlDeviceEnv {
  unsigned tid, nthreads, lane, laneCount;
  bool firstBlock, manyBlocks;
  unsigned long long* finishedBlocks;
  __device__ static uint64_t load(const uint64_t* p) { return *reinterpret_cast<const volatile uint64_t*>(p); }
  __device__ static void store(uint64_t* p, uint64_t v) { *reinterpret_cast<volatile uint64_t*>(p) = v; }
  __device__ static void loadPair(const uint64_t* p, uint64_t& lo, uint64_t& hi) {
#if defined(__CUDA_ARCH__)
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(p) : "memory");
#else
    lo = load(p);
    hi = load(p + 1);
#endif
  }
  __device__ static void storePair(uint64_t* p, uint64_t lo, uint64_t hi) {
#if defined(__CUDA_ARCH__)
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(lo), "l"(hi) : "memory");
#else
    store(p, lo);
    store(p + 1, hi);
#endif
  }
  __device__ static void pause() { gpuSpinPause(); }
  __device__ static void fence() { __threadfence_system(); }
  __device__ void sync() const { llBlockBarrier(); }
  __device__ bool lastToFinish() const {
    if (gridDim.x == 1) return true;
    llDeviceFence();
    if (llAtomicAdd(finishedBlocks, 1ull) != gridDim.x - 1) return false;
    *finishedBlocks = 0;  // for the next call: no other block of this one touches it any more
    return true;
  }
};

/// combine / finish of ll::allReduce for storage type T and operator Op: element by element over the
/// 8 / sizeof(T) elements of a line (the zero padding of the last line is reduced too, never stored).
template <typename T, typename Op>
struct LlReduce {
  uint64_t avgDivisor;  // 0: not an average
  __device__ void combine(uint64_t& acc, uint64_t in) const {
    T a[8 / sizeof(T)], b[8 / sizeof(T)];
    __builtin_memcpy(a, &acc, 8);
    __builtin_memcpy(b, &in, 8);
#pragma unroll
    for (unsigned k = 0; k < 8 / sizeof(T); ++k) a[k] = AccumulateFn<T, Op>{}(a[k], b[k]);
    __builtin_memcpy(&acc, a, 8);
  }
  __device__ void finish(uint64_t& acc) const {
    if (avgDivisor == 0) return;
    T a[8 / sizeof(T)];
    __builtin_memcpy(a, &acc, 8);
#pragma unroll
    for (unsigned k = 0; k < 8 / sizeof(T); ++k) a[k] = DivideFn<T>{avgDivisor}(a[k], a[k]);
    __builtin_memcpy(&acc, a, 8);
  }
};

template <typename T, typename Op>
__device__ inline void llAllReduceBody(const hetcclGpuLlAllReduce_t& a) {
  HETCCL_LL_SHARED ll::Shared shared;
  LlDeviceEnv env{blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, threadIdx.x, blockDim.x,
                  blockIdx.x == 0, gridDim.x > 1, reinterpret_cast<unsigned long long*>(a.seq + 1)};
  const LlReduce<T, Op> reduce{a.op == kAvg ? static_cast<uint64_t>(a.nranks) : 0};
  ll::allReduce(a, sizeof(T), env, reduce, shared);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(ll::kMaxBlockThreads) llAllReduceKernel(hetcclGpuLlAllReduce_t a) {
  llAllReduceBody<T, Op>(a);
}

#ifndef HETCCL_GPU_DEVICE_ONLY

/// Queues the call on `stream`: `invalid` for arguments ll::invalidArgs refuses.
inline gpuError_t launchLlAllReduce(const hetcclGpuLlAllReduce_t& a, gpuStream_t stream, gpuError_t invalid) {
  gpuError_t err = invalid;
  visitElementType(a.dataType, [&](auto element) {
    using T = decltype(element);
    if (ll::invalidArgs(&a, sizeof(T))) return;
    const ll::LaunchShape shape = ll::launchShape(a.count * sizeof(T), a.nranks);
    const unsigned blocks = shape.blocks, threads = shape.threads;
    switch (a.op) {
      case kSum: case kAvg: llAllReduceKernel<T, SumOp><<<blocks, threads, 0, stream>>>(a); break;
      case kProd: llAllReduceKernel<T, ProdOp><<<blocks, threads, 0, stream>>>(a); break;
      case kMax: llAllReduceKernel<T, typename MinMaxOf<T>::Max><<<blocks, threads, 0, stream>>>(a); break;
      case kMin: llAllReduceKernel<T, typename MinMaxOf<T>::Min><<<blocks, threads, 0, stream>>>(a); break;
      default: return;
    }
    err = gpuGetLastError();
  });
  return err;
}

/// Loads every latency-path kernel on the current device (see flag_kernels.cuh: lazy loading may wait for
/// the whole device, and a peer's kernel may be polling).
inline gpuError_t preloadLlKernels() {
  gpuError_t err = gpuSuccess;
  for (int type = kInt8; type <= kFloat8e5m2; ++type)
    visitElementType(type, [&](auto element) {
      using T = decltype(element);
      preloadKernel(err, reinterpret_cast<const void*>(&llAllReduceKernel<T, SumOp>));
      preloadKernel(err, reinterpret_cast<const void*>(&llAllReduceKernel<T, ProdOp>));
      preloadKernel(err, reinterpret_cast<const void*>(&llAllReduceKernel<T, typename MinMaxOf<T>::Max>));
      preloadKernel(err, reinterpret_cast<const void*>(&llAllReduceKernel<T, typename MinMaxOf<T>::Min>));
    });
  return err;
}

#endif  // HETCCL_GPU_DEVICE_ONLY

}  // namespace hetccl::gpu
