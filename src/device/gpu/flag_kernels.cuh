// Kernels that connect a stream to a 64-bit flag in pinned host memory, for runtimes (or devices)
// without stream memory operations. Single-source for CUDA and HIP.
//  - waitFlagKernel: one thread polls the flag with volatile loads until (int64)(*flag - value) >= 0; the
//    stream runs nothing after it until then (the same condition as cuStreamWaitValue64 GEQ).
//  - writeFlagKernel: makes every earlier write of the stream visible system-wide, then stores the value.
// `flag` is the device-side address of the pinned word (gpuHostGetDevicePointer).
#pragma once

#include <stdint.h>

#include "device/gpu/gpu_alias.hpp"

namespace hetccl::gpu {

__global__ void waitFlagKernel(const volatile uint64_t* flag, uint64_t value) {
  while (static_cast<int64_t>(*flag - value) < 0) gpuSpinPause();
  __threadfence_system();  // later reads of this stream's kernels see what the host wrote before the flag
}

__global__ void writeFlagKernel(volatile uint64_t* flag, uint64_t value) {
  __threadfence_system();
  *flag = value;
  __threadfence_system();
}

inline gpuError_t launchWaitFlag(const uint64_t* deviceFlag, uint64_t value, gpuStream_t stream) {
  waitFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return gpuGetLastError();
}

inline gpuError_t launchWriteFlag(uint64_t* deviceFlag, uint64_t value, gpuStream_t stream) {
  writeFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return gpuGetLastError();
}

}  // namespace hetccl::gpu
