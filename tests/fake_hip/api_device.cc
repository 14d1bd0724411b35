// The fake's exported error, version and device functions: last errors, runtime and driver versions, the
// device count, the current device, attributes and properties (see api.hpp, README.md).
#include <cstdio>
#include <cstring>

#include "api.hpp"
#include "api_internal.hpp"
#include "runtime.hpp"

using namespace fakehip;

namespace {

hipError_t fillProperties(void* prop, int device, size_t archOffset) {
  if (!prop) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  char* p = static_cast<char*>(prop);
  std::memset(p, 0, archOffset + 256);
  std::snprintf(p, 256, "Fake AMD GPU %d (libhetccl-fakehip)", device);
  std::snprintf(p + archOffset, 256, "%s", deviceArch(device).c_str());
  return ret(hipSuccess);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Errors, versions, devices.

FAKEHIP_API const char* hipGetErrorString(hipError_t error) { return errorString(error); }
FAKEHIP_API const char* hipGetErrorName(hipError_t error) { return errorName(error); }
FAKEHIP_API hipError_t hipGetLastError() {
  enter("hipGetLastError", 0);
  return takeLastError();
}
FAKEHIP_API hipError_t hipPeekAtLastError() {
  enter("hipPeekAtLastError", 0);
  return peekLastError();
}

FAKEHIP_API hipError_t hipRuntimeGetVersion(int* runtimeVersion) {
  FAKEHIP_ENTER("hipRuntimeGetVersion", hipErrorInvalidValue);
  if (!runtimeVersion) return ret(hipErrorInvalidValue);
  *runtimeVersion = config().runtimeVersion;
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipDriverGetVersion(int* driverVersion) {
  FAKEHIP_ENTER("hipDriverGetVersion", hipErrorInvalidValue);
  if (!driverVersion) return ret(hipErrorInvalidValue);
  *driverVersion = config().runtimeVersion;  // ROCm reports the HIP version here too
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipGetDeviceCount(int* count) {
  FAKEHIP_ENTER("hipGetDeviceCount", hipErrorNoDevice);
  if (!count) return ret(hipErrorInvalidValue);
  *count = deviceCount();
  return ret(*count == 0 ? hipErrorNoDevice : hipSuccess);
}

FAKEHIP_API hipError_t hipGetDevice(int* device) {
  FAKEHIP_ENTER("hipGetDevice", hipErrorInvalidValue);
  if (!device) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  *device = currentDevice();
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipSetDevice(int device) {
  FAKEHIP_ENTER("hipSetDevice", hipErrorInvalidDevice);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  setCurrentDevice(device);
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipDeviceSynchronize() {
  FAKEHIP_ENTER("hipDeviceSynchronize", hipErrorUnknown);
  synchronizeDevice(currentDevice());
  return ret(hipSuccess);
}

FAKEHIP_API hipError_t hipDeviceGetAttribute(int* value, int attribute, int device) {
  FAKEHIP_ENTER("hipDeviceGetAttribute", hipErrorInvalidValue);
  if (!value) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  switch (attribute) {
    case hipDeviceAttributeCanUseStreamWaitValue: *value = config().noStreamMemops ? 0 : 1; break;
    case hipDeviceAttributeMultiprocessorCount: *value = 104; break;
    case hipDeviceAttributeCanMapHostMemory: *value = 1; break;
    case hipDeviceAttributeUnifiedAddressing: *value = 1; break;
    case hipDeviceAttributeWarpSize: *value = 64; break;
    case hipDeviceAttributeMaxThreadsPerBlock: *value = 1024; break;
    default:
      std::fprintf(stderr, "fakehip: hipDeviceGetAttribute: attribute %d is not modelled\n", attribute);
      return ret(hipErrorInvalidValue);
  }
  return ret(hipSuccess);
}

// FAKEHIP_PCI_BUS_ID: every device's bus id (so a test can put several ranks on "one GPU"); unset: not
// supported (the core then counts ranks as on GPUs of their own).
FAKEHIP_API hipError_t hipDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  FAKEHIP_ENTER("hipDeviceGetPCIBusId", hipErrorInvalidValue);
  if (!pciBusId || len <= 0) return ret(hipErrorInvalidValue);
  if (noDevice()) return ret(hipErrorNoDevice);
  if (!validDevice(device)) return ret(hipErrorInvalidDevice);
  const std::string& id = config().pciBusId;
  if (id.empty()) return ret(hipErrorNotSupported);
  if (static_cast<int>(id.size()) >= len) return ret(hipErrorInvalidValue);
  std::memcpy(pciBusId, id.c_str(), id.size() + 1);
  return ret(hipSuccess);
}

// gcnArchName offsets: hipDeviceProp_tR0600 1160, hipDeviceProp_t of 5.x (= R0000) 396 (LLVM's
// amdgpu-arch tool reads them at the same offsets).
FAKEHIP_API hipError_t hipGetDeviceProperties(void* prop, int device) {
  FAKEHIP_ENTER("hipGetDeviceProperties", hipErrorInvalidValue);
  return fillProperties(prop, device, 396);
}
#ifndef FAKEHIP_ROCM5
FAKEHIP_API hipError_t hipGetDevicePropertiesR0000(void* prop, int device) {
  FAKEHIP_ENTER("hipGetDevicePropertiesR0000", hipErrorInvalidValue);
  return fillProperties(prop, device, 396);
}
FAKEHIP_API hipError_t hipGetDevicePropertiesR0600(void* prop, int device) {
  FAKEHIP_ENTER("hipGetDevicePropertiesR0600", hipErrorInvalidValue);
  return fillProperties(prop, device, 1160);
}
#endif
