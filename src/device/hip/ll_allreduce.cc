// The latency path's entry point of the HIP plugin (hetcclGpuPlugin_t::llAllReduce): argument checks, then the
// kernel (kernel_abi.hpp 5.; the protocol in src/device/gpu/ll_protocol.cuh). Run against the fake HIP runtime
// in CI (which executes the protocol's code on the host); never on an AMD GPU.
#include "device/gpu/ll_protocol.cuh"
#include "device/hip/kernels.hpp"
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {

int llAllReduce(const hetcclGpuLlAllReduce_t* args, void* stream) {
  if (const char* why = gpu::ll::invalidArgs(args, args ? gpu::ll::elementBytes(args->dataType) : 0))
    return fail(HETCCL_GPU_ERR_ARGUMENT, "llAllReduce", why);
  return launchLlAllReduce(*args, stream);  // ensureKernels() first: every kernel is loaded before any polls
}

}  // namespace hetccl::hip_plugin
