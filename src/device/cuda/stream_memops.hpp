// CUDA driver stream memory operations (cuStreamWaitValue64 / cuStreamWriteValue64), reached through
// cudaGetDriverEntryPointByVersion so that the plugin never links libcuda. The one CUDA-only part of the
// flag machinery: a HIP plugin calls hipStreamWaitValue64 / hipStreamWriteValue64 directly instead.
#pragma once

#include <stdint.h>

#include "device/base/gpu_plugin.h"
#include "device/gpu/gpu_alias.hpp"

namespace hetccl::cuda_plugin {

/// True when the driver offers 64-bit stream memory operations on `device` (resolved once; cached per
/// device). Logs at INFO which method a device uses, once per device.
bool nativeFlagOpsSupported(int device) noexcept;

/// nativeFlagOpsSupported() for the calling thread's current device (false when there is none).
bool nativeOnCurrentDevice() noexcept;

/// Queues "wait until (int64)(*deviceFlag - value) >= 0" on `stream`. Returns a HETCCL_GPU_* code and
/// records the driver's error text on failure. Only after nativeFlagOpsSupported() returned true.
int nativeWaitFlag(gpuStream_t stream, const uint64_t* deviceFlag, uint64_t value) noexcept;

/// Queues "*deviceFlag = value" (after a memory barrier over earlier work) on `stream`.
int nativeWriteFlag(gpuStream_t stream, uint64_t* deviceFlag, uint64_t value) noexcept;

/// Queues `count` WAIT_GEQ / WAIT_EQ / WRITE operations (device addresses) as stream memory operations:
/// one cuStreamBatchMemOp where the driver has it, else one call each. Only after
/// nativeFlagOpsSupported() returned true.
int nativeStreamOps(gpuStream_t stream, const hetcclGpuStreamOp_t* ops, unsigned count) noexcept;

}  // namespace hetccl::cuda_plugin
