// Process state of the CUDA plugin shared by its files: the core's logger and the thread's last error.
#pragma once

#include "device/base/gpu_plugin.h"
#include "device/gpu/gpu_alias.hpp"
#include "device/gpu/plugin_support.hpp"

namespace hetccl::cuda_plugin {

// The logger and the thread's last error are shared by the plugins (src/device/gpu/plugin_support.hpp).
using gpu_plugin::fail;
using gpu_plugin::lastError;
using gpu_plugin::logf;
using gpu_plugin::setLogger;
#define CUDA_PLUGIN_INFO(...) ::hetccl::cuda_plugin::logf(HETCCL_GPU_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define CUDA_PLUGIN_WARN(...) ::hetccl::cuda_plugin::logf(HETCCL_GPU_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)

/// HETCCL_GPU_OK for gpuSuccess; otherwise clears the runtime's sticky last error, records
/// "<call>: <error name>: <error text>" and returns the matching HETCCL_GPU_ERR_* code
/// (NOT_READY is returned without recording anything).
int check(gpuError_t err, const char* call) noexcept;
/// Loads the plugin's kernels on the current device once, before its first polling kernel (flags.cc).
int preloadKernelsOnce();

/// Relaxes the calling thread's stream-capture mode for its lifetime, so that allocation and creation calls
/// stay legal while a stream is being captured in the global mode (restores the previous mode).
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() noexcept { (void)gpuThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { (void)gpuThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  gpuStreamCaptureMode mode_ = gpuStreamCaptureModeRelaxed;
};

}  // namespace hetccl::cuda_plugin
