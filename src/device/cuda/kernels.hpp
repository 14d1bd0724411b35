// Host-callable launchers of the plugin's kernels (kernels.cu, compiled by nvcc), so that the plugin's
// .cc files stay plain C++. Each queues one kernel on `stream` and returns the launch's error; arguments
// are validated by the callers. Type and op codes are hetccl::DataType / hetccl::RedOpKind values.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/base/gpu_plugin.h"
#include "device/gpu/gpu_alias.hpp"

namespace hetccl::cuda_plugin {

gpuError_t launchReduceKernel(void* dst, const void* src, size_t count, int dataType, int op, gpuStream_t stream);
gpuError_t launchScaleKernel(void* dst, const void* src, size_t count, int dataType, const void* scalar,
                             gpuStream_t stream);
gpuError_t launchDivideKernel(void* buf, size_t count, int dataType, uint64_t n, gpuStream_t stream);
gpuError_t launchWaitFlagKernel(const uint64_t* deviceFlag, uint64_t value, gpuStream_t stream);
gpuError_t launchWriteFlagKernel(uint64_t* deviceFlag, uint64_t value, gpuStream_t stream);
/// One streamOpsKernel running `count` (<= HETCCL_GPU_MAX_STREAM_OPS) operations, validated by the caller.
gpuError_t launchStreamOpsKernel(const hetcclGpuStreamOp_t* ops, unsigned count, gpuStream_t stream);
/// Copies `count` ranges (none empty, destinations not overlapping, every address one the current device can
/// reach) with copyRangesKernel, gpu::kCopyRangesPerLaunch ranges per launch.
gpuError_t launchCopyRangesKernel(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                                  gpuStream_t stream);
/// The latency path's kernel for `args` (checked by the caller); gpuErrorInvalidValue for an unsupported type or
/// operator, or boards too small for the count.
gpuError_t launchLlAllReduceKernel(const hetcclGpuLlAllReduce_t& args, gpuStream_t stream);
/// Loads every kernel above on the current device, so that no later launch loads one lazily (a lazy load
/// may wait for a spinning flag kernel: src/device/gpu/flag_kernels.cuh). Idempotent.
gpuError_t preloadKernels();

}  // namespace hetccl::cuda_plugin
