// The latency path's entry point of the CUDA plugin (hetcclGpuPlugin_t::llAllReduce): argument checks, then
// the kernel (src/device/gpu/ll_kernels.cuh).
#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"
#include "device/gpu/ll_protocol.cuh"

namespace hetccl::cuda_plugin {

int llAllReduce(const hetcclGpuLlAllReduce_t* args, void* stream) {
  if (const char* why = gpu::ll::invalidArgs(args, args ? gpu::ll::elementBytes(args->dataType) : 0))
    return fail(HETCCL_GPU_ERR_ARGUMENT, "llAllReduce", why);
  const hetcclGpuLlAllReduce_t& a = *args;
  if (const int rc = preloadKernelsOnce()) return rc;  // never a lazy load while a peer's kernel polls
  return check(launchLlAllReduceKernel(a, static_cast<gpuStream_t>(stream)),
               "llAllReduce (kernel launch)");
}

}  // namespace hetccl::cuda_plugin
