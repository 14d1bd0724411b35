// The kernel behind the plugin's streamOps (src/device/base/gpu_plugin.h, HETCCL_GPU_OP_*) where stream
// memory operations cannot do the work: call-stamp checks always, and waits and writes on devices without
// 64-bit stream memory operations. One thread runs a short list of operations in order. Single-source for
// CUDA and HIP. Words are accessed with volatile loads and stores; stores another agent reads are fenced
// system-wide (the rules of flag_kernels.cuh).
#pragma once

#include <stdint.h>

#include "device/base/gpu_plugin.h"
#include "device/gpu/gpu_alias.hpp"

namespace hetccl::gpu {

/// One launch's operations, passed by value (kernel parameter space).
struct StreamOpBatch {
  hetcclGpuStreamOp_t op[HETCCL_GPU_MAX_STREAM_OPS];
  unsigned count;
};

__device__ inline uint64_t loadWord(const uint64_t* p) { return *reinterpret_cast<const volatile uint64_t*>(p); }
__device__ inline void storeWord(uint64_t* p, uint64_t v) { *reinterpret_cast<volatile uint64_t*>(p) = v; }

/// The body of streamOpsKernel (a device function: the HIP plugin's extern "C" kernel runs it too).
__device__ inline void runStreamOps(const StreamOpBatch& batch) {
  for (unsigned i = 0; i < batch.count; ++i) {
    const hetcclGpuStreamOp_t& op = batch.op[i];
    switch (op.kind) {
      case HETCCL_GPU_OP_WAIT_GEQ:
        while (static_cast<int64_t>(loadWord(op.word) - op.value) < 0) gpuSpinPause();
        __threadfence_system();  // later work of the stream sees what was written before the word
        break;
      case HETCCL_GPU_OP_WAIT_EQ:
        while (loadWord(op.word) != op.value) gpuSpinPause();
        __threadfence_system();
        break;
      case HETCCL_GPU_OP_WRITE:
        __threadfence_system();
        storeWord(op.word, op.value);
        __threadfence_system();
        break;
      case HETCCL_GPU_OP_STAMP_CHECK: {
        uint64_t got[4];
        bool same = true;
        for (int w = 0; w < 4; ++w) {
          got[w] = loadWord(op.word + w);
          same = same && got[w] == op.expect[w];
        }
        if (!same && loadWord(op.report) == 0) {  // one writer per report: the ring's receiving stream
          for (int w = 0; w < 4; ++w) {
            storeWord(op.report + 1 + w, got[w]);
            storeWord(op.report + 5 + w, op.expect[w]);
          }
          __threadfence_system();
          storeWord(op.report, 1);
          __threadfence_system();
        }
        break;
      }
      default: break;  // validated by the launcher
    }
  }
}

__global__ void streamOpsKernel(StreamOpBatch batch) { runStreamOps(batch); }

#ifndef HETCCL_GPU_DEVICE_ONLY
/// Loads the kernel on the current device (see "Lazy loading" in flag_kernels.cuh).
inline gpuError_t preloadStreamOpsKernel() {
  gpuFuncAttributes attributes;
  return gpuFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&streamOpsKernel));
}

inline gpuError_t launchStreamOps(const StreamOpBatch& batch, gpuStream_t stream) {
  streamOpsKernel<<<1, 1, 0, stream>>>(batch);
  return gpuGetLastError();
}

#endif  // HETCCL_GPU_DEVICE_ONLY

}  // namespace hetccl::gpu
