// CUDA driver API functions reached through cudaGetDriverEntryPointByVersion, so that the plugin never
// links libcuda (stream memory operations, allocation address ranges).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "device/base/gpu_plugin.h"
#include "device/gpu/plugin_support.hpp"

namespace hetccl::cuda_plugin {

/// The entry points' ABI as of CUDA 12.0: the PFN_<name>_v<version> types of cudaTypedefs.h that match it.
inline constexpr unsigned kDriverApiVersion = 12000;

/// Sets *fn to the driver's `symbol` of the kDriverApiVersion ABI, or leaves it null when the driver lacks it
/// (the runtime's sticky error is cleared).
template <typename Fn>
void resolveDriverEntry(const char* symbol, Fn* fn) noexcept {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &address, kDriverApiVersion, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    *fn = reinterpret_cast<Fn>(address);
  else
    (void)cudaGetLastError();
}

/// Records "<call>: <the driver's text for result>" as the thread's last error; HETCCL_GPU_ERR_RUNTIME.
inline int driverFail(CUresult result, const char* call) noexcept {
  static const PFN_cuGetErrorString_v6000 errorString = [] {
    PFN_cuGetErrorString_v6000 f = nullptr;
    resolveDriverEntry("cuGetErrorString", &f);
    return f;
  }();
  const char* text = nullptr;
  if (errorString) errorString(result, &text);
  return gpu_plugin::fail(HETCCL_GPU_ERR_RUNTIME, call, text ? text : "unknown CUDA driver error");
}

/// The base and size of the allocation holding `ptr` (cuMemGetAddressRange: the runtime API has no such query).
inline int allocationRange(const void* ptr, void** base, size_t* bytes) noexcept {
  static const PFN_cuMemGetAddressRange_v3020 range = [] {
    PFN_cuMemGetAddressRange_v3020 f = nullptr;
    resolveDriverEntry("cuMemGetAddressRange", &f);
    return f;
  }();
  if (!range) return gpu_plugin::fail(HETCCL_GPU_ERR_RUNTIME, "cuMemGetAddressRange", "not offered by this driver");
  CUdeviceptr b = 0;
  size_t n = 0;
  const CUresult rc = range(&b, &n, reinterpret_cast<CUdeviceptr>(ptr));
  if (rc != CUDA_SUCCESS) return driverFail(rc, "cuMemGetAddressRange");
  *base = reinterpret_cast<void*>(b);
  *bytes = n;
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::cuda_plugin
