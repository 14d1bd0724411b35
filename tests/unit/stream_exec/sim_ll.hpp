// The simulated GPU's latency-path kernel (hetcclGpuPlugin_t::llAllReduce): the protocol's own code
// (src/device/gpu/ll_protocol.cuh) run on a host thread as a one-thread block, with hetccl's host reductions,
// so that the tests exercise the waits the GPU kernels run (scripts/mutate-stream-waits.sh removes them).
#pragma once

#include <functional>
#include <string>

#include "device/base/gpu_plugin.h"

namespace hetccl::test::sim {

/// The body of one call's kernel (arguments copied), or "" in *error and an empty function when `args` is
/// one the GPU plugin refuses too (null pointers, ranks out of range, unknown type or operator, premulsum,
/// a count beyond the boards).
std::function<void()> llKernelBody(const hetcclGpuLlAllReduce_t* args, std::string* error);

}  // namespace hetccl::test::sim
