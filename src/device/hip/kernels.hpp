// The HIP plugin's kernels on the host side: one module per device (an embedded code object, or the
// embedded source compiled by hiprtc and cached on disk), and launchers over kernel_abi.hpp.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/base/gpu_plugin.h"

namespace hetccl::hip_plugin {

/// Loads the kernels on the calling thread's current device once (code object selection, module load,
/// every function resolved), so that no later launch loads anything. HETCCL_GPU_* code.
int ensureKernels() noexcept;

// Launchers: ensureKernels(), then one hipModuleLaunchKernel on `stream`. Arguments are validated by the
// callers; `op` is a RedOpKind (avg / premulsum run the sum kernel).
int launchReduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream) noexcept;
int launchScale(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream) noexcept;
int launchDivide(void* buf, size_t count, int dataType, uint64_t n, void* stream) noexcept;
int launchWaitFlag(const uint64_t* deviceFlag, uint64_t value, void* stream) noexcept;
int launchWriteFlag(uint64_t* deviceFlag, uint64_t value, void* stream) noexcept;
int launchStreamOps(const hetcclGpuStreamOp_t* ops, unsigned count, void* stream) noexcept;
/// The latency path's kernel for `args` (checked by the caller: gpu::ll::invalidArgs), in the launch shape of
/// gpu::ll::launchShape.
int launchLlAllReduce(const hetcclGpuLlAllReduce_t& args, void* stream) noexcept;

/// Native stream memory operations (hipStreamWaitValue64 / hipStreamWriteValue64) on `device`: both symbols
/// resolved and hipDeviceGetAttribute(hipDeviceAttributeCanUseStreamWaitValue) = 1. Cached per device.
bool nativeFlagOpsSupported(int device) noexcept;
/// nativeFlagOpsSupported() of the current device (false when there is none).
bool nativeOnCurrentDevice() noexcept;

}  // namespace hetccl::hip_plugin
