// The CUDA plugin's exported symbol: hetcclGpuPlugin_v4, plus initialisation and device selection.
#include <cstdio>
#include <mutex>

#include "device/base/gpu_plugin.h"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {
namespace {

struct InitResult {
  int code = HETCCL_GPU_OK;
  char error[512] = "";
};

InitResult initialise() {
  InitResult result;
  int count = 0;
  result.code = check(gpuGetDeviceCount(&count), "cudaGetDeviceCount");
  if (result.code == HETCCL_GPU_OK && count == 0)
    result.code = fail(HETCCL_GPU_ERR_NO_DEVICE, "cudaGetDeviceCount", "no CUDA device");
  if (result.code != HETCCL_GPU_OK) {
    snprintf(result.error, sizeof result.error, "%s", lastError());
    return result;
  }
  int runtimeVersion = 0, driverVersion = 0;
  (void)gpuRuntimeGetVersion(&runtimeVersion);
  (void)gpuDriverGetVersion(&driverVersion);
  CUDA_PLUGIN_INFO("CUDA plugin ready: %d device(s), runtime %d, driver %d", count, runtimeVersion, driverVersion);
  return result;
}

int init(hetcclGpuLogger_v1_t logger) {
  setLogger(logger);
  static const InitResult result = initialise();
  if (result.code != HETCCL_GPU_OK) return fail(result.code, "init", result.error);
  return HETCCL_GPU_OK;
}

const char* lastErrorText() { return lastError(); }

int versions(int* runtimeVersion, int* driverVersion) {
  if (!runtimeVersion || !driverVersion) return fail(HETCCL_GPU_ERR_ARGUMENT, "versions", "null result pointer");
  *runtimeVersion = 0;
  *driverVersion = 0;
  if (const int rc = check(gpuRuntimeGetVersion(runtimeVersion), "cudaRuntimeGetVersion")) return rc;
  return check(gpuDriverGetVersion(driverVersion), "cudaDriverGetVersion");
}

int deviceCount(int* count) {
  if (!count) return fail(HETCCL_GPU_ERR_ARGUMENT, "deviceCount", "null result pointer");
  *count = 0;
  return check(gpuGetDeviceCount(count), "cudaGetDeviceCount");
}

int getDevice(int* device) {
  if (!device) return fail(HETCCL_GPU_ERR_ARGUMENT, "getDevice", "null result pointer");
  return check(gpuGetDevice(device), "cudaGetDevice");
}

int setDevice(int device) { return check(gpuSetDevice(device), "cudaSetDevice"); }

int deviceBusId(int device, char* busId, int length) {
  if (!busId || length < 2) return fail(HETCCL_GPU_ERR_ARGUMENT, "deviceBusId", "null or short result buffer");
  return check(gpuDeviceGetPCIBusId(busId, length, device), "cudaDeviceGetPCIBusId");
}

}  // namespace
}  // namespace hetccl::cuda_plugin

HETCCL_GPU_PLUGIN_DEFINE_TABLE(hetccl::cuda_plugin, "cuda", hetccl::cuda_plugin::deviceBusId)
