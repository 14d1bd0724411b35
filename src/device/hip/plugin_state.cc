#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {

int check(api::hipError_t err, const char* call) noexcept {
  if (err == api::hipSuccess) return HETCCL_GPU_OK;
  const api::Runtime& r = rt();
  if (r.hipGetLastError) (void)r.hipGetLastError();  // clear it, so it does not surface in a later call
  if (err == api::hipErrorNotReady) return HETCCL_GPU_ERR_NOT_READY;
  const char* name = r.hipGetErrorName ? r.hipGetErrorName(err) : nullptr;
  const char* text = r.hipGetErrorString ? r.hipGetErrorString(err) : nullptr;
  return gpu_plugin::failVendor(call, name ? name : "hipError", text ? text : "unknown HIP error",
                                err == api::hipErrorNoDevice || err == api::hipErrorInsufficientDriver);
}

}  // namespace hetccl::hip_plugin
