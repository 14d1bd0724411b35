// Process state of the HIP plugin shared by its files: the resolved HIP runtime, the core's logger and the
// thread's last error.
#pragma once

#include "device/base/gpu_plugin.h"
#include "device/gpu/plugin_support.hpp"
#include "device/hip/hip_api.hpp"

namespace hetccl::hip_plugin {

/// The resolved runtime (runtime.cc). Only valid after init() succeeded: every entry point but init and
/// lastError is called by the core only then; REQUIRED members are non-null, OPTIONAL ones may be null.
const api::Runtime& rt() noexcept;

// The logger and the thread's last error are shared by the plugins (src/device/gpu/plugin_support.hpp).
using gpu_plugin::fail;
using gpu_plugin::lastError;
using gpu_plugin::logf;
using gpu_plugin::setLogger;
#define HIP_PLUGIN_INFO(...) ::hetccl::hip_plugin::logf(HETCCL_GPU_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define HIP_PLUGIN_WARN(...) ::hetccl::hip_plugin::logf(HETCCL_GPU_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)

/// HETCCL_GPU_OK for hipSuccess; otherwise clears the runtime's last error, records
/// "<call>: <hipGetErrorName>: <hipGetErrorString>" and returns the matching HETCCL_GPU_ERR_* code
/// (hipErrorNotReady returns HETCCL_GPU_ERR_NOT_READY without recording anything).
int check(api::hipError_t err, const char* call) noexcept;

/// Relaxes the calling thread's stream-capture mode for its lifetime (allocation and creation calls stay
/// legal while a stream is being captured in the global mode); restores the previous mode.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() noexcept { (void)rt().hipThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { (void)rt().hipThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  int mode_ = api::hipStreamCaptureModeRelaxed;
};

}  // namespace hetccl::hip_plugin
