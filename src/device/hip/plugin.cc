// The HIP plugin's exported symbol: hetcclGpuPlugin_v4, plus initialisation and device selection.
#include <cstdio>

#include "device/base/gpu_plugin.h"
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"
#include "device/hip/runtime.hpp"

namespace hetccl::hip_plugin {
namespace {

struct InitResult {
  int code = HETCCL_GPU_OK;
  char error[768] = "";
};

InitResult initialise() {
  InitResult result;
  const char* why = nullptr;
  result.code = loadRuntime(&why);
  if (result.code != HETCCL_GPU_OK) {
    snprintf(result.error, sizeof result.error, "%s", why);
    return result;
  }
  int count = 0;
  result.code = check(rt().hipGetDeviceCount(&count), "hipGetDeviceCount");
  if (result.code == HETCCL_GPU_OK && count == 0)
    result.code = fail(HETCCL_GPU_ERR_NO_DEVICE, "hipGetDeviceCount", "no HIP device");
  if (result.code != HETCCL_GPU_OK) {
    snprintf(result.error, sizeof result.error, "%s (runtime %s)", lastError(), rt().path);
    return result;
  }
  int driverVersion = 0;
  if (rt().hipDriverGetVersion(&driverVersion) != api::hipSuccess) (void)rt().hipGetLastError();
  HIP_PLUGIN_INFO("HIP plugin ready: %d device(s), runtime %s version %d, driver %d, stream wait-value ops %s", count,
                  rt().path, rt().runtimeVersion, driverVersion,
                  rt().hipStreamWaitValue64 && rt().hipStreamWriteValue64 ? "resolved" : "absent");
  return result;
}

int init(hetcclGpuLogger_v1_t logger) {
  setLogger(logger);
  static const InitResult result = initialise();
  if (result.code != HETCCL_GPU_OK) return fail(result.code, "init", result.error);
  return HETCCL_GPU_OK;
}

const char* lastErrorText() { return lastError(); }

/// HIP_VERSION (major*1e7 + minor*1e5 + patch) as the interface's 1000*major + 10*minor.
int interfaceVersion(int hipVersion) { return hipVersion / 10000000 * 1000 + hipVersion / 100000 % 100 * 10; }

int versions(int* runtimeVersion, int* driverVersion) {
  if (!runtimeVersion || !driverVersion) return fail(HETCCL_GPU_ERR_ARGUMENT, "versions", "null result pointer");
  *runtimeVersion = 0;
  *driverVersion = 0;
  int runtime = 0, driver = 0;
  if (const int rc = check(rt().hipRuntimeGetVersion(&runtime), "hipRuntimeGetVersion")) return rc;
  if (const int rc = check(rt().hipDriverGetVersion(&driver), "hipDriverGetVersion")) return rc;
  *runtimeVersion = interfaceVersion(runtime);
  *driverVersion = interfaceVersion(driver);
  return HETCCL_GPU_OK;
}

int deviceCount(int* count) {
  if (!count) return fail(HETCCL_GPU_ERR_ARGUMENT, "deviceCount", "null result pointer");
  *count = 0;
  return check(rt().hipGetDeviceCount(count), "hipGetDeviceCount");
}

int getDevice(int* device) {
  if (!device) return fail(HETCCL_GPU_ERR_ARGUMENT, "getDevice", "null result pointer");
  return check(rt().hipGetDevice(device), "hipGetDevice");
}

int setDevice(int device) { return check(rt().hipSetDevice(device), "hipSetDevice"); }

/// The device's PCI bus id ("0000:c1:00.0"), so that the core tells ranks sharing one GPU apart (the latency
/// path is refused to them). A runtime without hipDeviceGetPCIBusId: a failure (unknown), as CUDA's table
/// without the entry.
int deviceBusId(int device, char* busId, int length) {
  if (!busId || length < 2) return fail(HETCCL_GPU_ERR_ARGUMENT, "deviceBusId", "null or short result buffer");
  if (!rt().hipDeviceGetPCIBusId) return fail(HETCCL_GPU_ERR_RUNTIME, "deviceBusId", "the HIP runtime has no hipDeviceGetPCIBusId");
  return check(rt().hipDeviceGetPCIBusId(busId, length, device), "hipDeviceGetPCIBusId");
}

}  // namespace
}  // namespace hetccl::hip_plugin

HETCCL_GPU_PLUGIN_DEFINE_TABLE(hetccl::hip_plugin, "hip", hetccl::hip_plugin::deviceBusId)
