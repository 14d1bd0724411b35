// The kernel behind the plugin's streamOps (src/device/base/gpu_plugin.h, HETCCL_GPU_OP_*): one thread
// runs a short list of operations on 64-bit words in order. Every value is read when the kernel runs, so
// one launch captured into a graph is right on every replay (waits and writes are relative to counters
// the streams advance themselves). Single-source for CUDA and HIP.
//
// Words live in pinned host memory (ring counters and headers, read by the peer and the host) or device
// memory (base counters); both are accessed with volatile loads and stores, and every store that another
// agent reads is fenced system-wide (the same rules as flag_kernels.cuh).
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

__global__ void streamOpsKernel(StreamOpBatch batch) {
  for (unsigned i = 0; i < batch.count; ++i) {
    const hetcclGpuStreamOp_t& op = batch.op[i];
    const uint64_t target = (op.base ? loadWord(op.base) : 0) + static_cast<uint64_t>(op.offset);
    switch (op.kind) {
      case HETCCL_GPU_OP_WAIT:
        while (static_cast<int64_t>(loadWord(op.word) - target) < 0) {
          if (op.abort && loadWord(op.abort) != 0) break;
          gpuSpinPause();
        }
        __threadfence_system();  // later work of the stream sees what was written before the counter
        break;
      case HETCCL_GPU_OP_WRITE:
        __threadfence_system();
        storeWord(op.word, target);
        __threadfence_system();
        break;
      case HETCCL_GPU_OP_ADVANCE: {
        const uint64_t multiple = op.arg[0] ? op.arg[0] : 1;
        const uint64_t v = loadWord(op.word) + static_cast<uint64_t>(op.offset);
        storeWord(op.word, (v + multiple - 1) / multiple * multiple);
        __threadfence_system();
        break;
      }
      case HETCCL_GPU_OP_STAMP_WRITE:
        storeWord(op.word + 0, op.arg[0]);
        storeWord(op.word + 1, target);
        storeWord(op.word + 2, op.arg[2]);
        storeWord(op.word + 3, op.arg[3]);
        __threadfence_system();
        break;
      case HETCCL_GPU_OP_STAMP_CHECK: {
        const uint64_t want[4] = {op.arg[0], target, op.arg[2], op.arg[3]};
        uint64_t got[4];
        for (int w = 0; w < 4; ++w) got[w] = loadWord(op.word + w);
        bool same = true;
        for (int w = 0; w < 4; ++w) same = same && got[w] == want[w];
        if (!same && loadWord(op.report) == 0) {  // one writer per report: the ring's receiving stream
          for (int w = 0; w < 4; ++w) {
            storeWord(op.report + 1 + w, got[w]);
            storeWord(op.report + 5 + w, want[w]);
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

/// Loads the kernel on the current device (see "Lazy loading" in flag_kernels.cuh).
inline gpuError_t preloadStreamOpsKernel() {
  gpuFuncAttributes attributes;
  return gpuFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&streamOpsKernel));
}

inline gpuError_t launchStreamOps(const StreamOpBatch& batch, gpuStream_t stream) {
  streamOpsKernel<<<1, 1, 0, stream>>>(batch);
  return gpuGetLastError();
}

}  // namespace hetccl::gpu
