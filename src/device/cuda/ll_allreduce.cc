// The latency path's entry point of the CUDA plugin (hetcclGpuPlugin_t::llAllReduce): argument checks, then
// the kernel (src/device/gpu/ll_kernels.cuh).
#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {

int llAllReduce(const hetcclGpuLlAllReduce_t* args, void* stream) {
  if (!args) return fail(HETCCL_GPU_ERR_ARGUMENT, "llAllReduce", "null arguments");
  const hetcclGpuLlAllReduce_t& a = *args;
  if (a.nranks < 2 || a.nranks > HETCCL_GPU_LL_MAX_RANKS || a.rank < 0 || a.rank >= a.nranks)
    return fail(HETCCL_GPU_ERR_ARGUMENT, "llAllReduce", "rank or rank count out of range");
  for (int r = 0; r < a.nranks; ++r)
    if (!a.boards[r]) return fail(HETCCL_GPU_ERR_ARGUMENT, "llAllReduce", "null board");
  if (!a.seq || !a.abortWord || !a.report || (a.count > 0 && (!a.send || !a.recv)))
    return fail(HETCCL_GPU_ERR_ARGUMENT, "llAllReduce", "null pointer");
  if (const int rc = preloadKernelsOnce()) return rc;  // never a lazy load while a peer's kernel polls
  return check(launchLlAllReduceKernel(a, static_cast<gpuStream_t>(stream)),
               "llAllReduce (kernel launch; an unsupported type or operator, or a count beyond the boards)");
}

}  // namespace hetccl::cuda_plugin
