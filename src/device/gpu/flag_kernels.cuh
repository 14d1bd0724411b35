// Kernels that connect a stream to a 64-bit flag in pinned host memory, for runtimes (or devices)
// without stream memory operations. Single-source for CUDA and HIP.
//  - waitFlagKernel: one thread polls the flag with volatile loads until (int64)(*flag - value) >= 0; the
//    stream runs nothing after it until then (the same condition as cuStreamWaitValue64 GEQ).
//  - writeFlagKernel: makes every earlier write of the stream visible system-wide, then stores the value.
// `flag` is the device-side address of the pinned word (gpuHostGetDevicePointer).
//
// Lazy loading: with CUDA_MODULE_LOADING=LAZY (CUDA 12's default) a kernel is loaded at its first launch, and
// loading may synchronise the device. If a waitFlagKernel is spinning and the thread that will write the flag
// first launches another kernel, that launch waits for the spinning kernel: a deadlock (seen on H200, the
// write-flag kernel queued behind a wait). preloadFlagKernels() loads both on the current device; the plugin
// calls it (and preloads its other kernels) before the first polling kernel on each device.
#pragma once

#include <stdint.h>

#include "device/gpu/gpu_alias.hpp"

namespace hetccl::gpu {

// The kernels' bodies are device functions, so that other kernels can run them (the HIP plugin's extern "C"
// kernels).
__device__ inline void waitFlag(const volatile uint64_t* flag, uint64_t value) {
  while (static_cast<int64_t>(*flag - value) < 0) gpuSpinPause();
  __threadfence_system();  // later reads of this stream's kernels see what the host wrote before the flag
}

__device__ inline void writeFlag(volatile uint64_t* flag, uint64_t value) {
  __threadfence_system();
  *flag = value;
  __threadfence_system();
}

__global__ void waitFlagKernel(const volatile uint64_t* flag, uint64_t value) { waitFlag(flag, value); }

__global__ void writeFlagKernel(volatile uint64_t* flag, uint64_t value) { writeFlag(flag, value); }

#ifndef HETCCL_GPU_DEVICE_ONLY

/// Loads both kernels on the current device (see "Lazy loading" above). First error or gpuSuccess.
inline gpuError_t preloadFlagKernels() {
  gpuFuncAttributes attributes;
  gpuError_t err = gpuFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&waitFlagKernel));
  if (err == gpuSuccess) err = gpuFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&writeFlagKernel));
  return err;
}

inline gpuError_t launchWaitFlag(const uint64_t* deviceFlag, uint64_t value, gpuStream_t stream) {
  waitFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return gpuGetLastError();
}

inline gpuError_t launchWriteFlag(uint64_t* deviceFlag, uint64_t value, gpuStream_t stream) {
  writeFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return gpuGetLastError();
}

#endif  // HETCCL_GPU_DEVICE_ONLY

}  // namespace hetccl::gpu
