#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {

int check(gpuError_t err, const char* call) noexcept {
  if (err == gpuSuccess) return HETCCL_GPU_OK;
  (void)gpuGetLastError();  // clear a non-sticky error so it does not surface in a later, unrelated call
  if (err == gpuErrorNotReady) return HETCCL_GPU_ERR_NOT_READY;
  return gpu_plugin::failVendor(call, gpuGetErrorName(err), gpuGetErrorString(err),
                                err == gpuErrorNoDevice || err == gpuErrorInsufficientDriver);
}

}  // namespace hetccl::cuda_plugin
