#include "device/cuda/plugin_state.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace hetccl::cuda_plugin {
namespace {

std::atomic<hetcclGpuLogger_v1_t> gLogger{nullptr};
thread_local char tLastError[512] = "";

}  // namespace

void setLogger(hetcclGpuLogger_v1_t logger) noexcept { gLogger.store(logger); }

void logf(int level, const char* file, int line, const char* format, ...) noexcept {
  const hetcclGpuLogger_v1_t logger = gLogger.load();
  if (!logger) return;
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  logger(level, file, line, message);
}

int fail(int code, const char* call, const char* detail) noexcept {
  std::snprintf(tLastError, sizeof tLastError, "%s: %s", call, detail);
  return code;
}

int check(gpuError_t err, const char* call) noexcept {
  if (err == gpuSuccess) return HETCCL_GPU_OK;
  (void)gpuGetLastError();  // clear a non-sticky error so it does not surface in a later, unrelated call
  if (err == gpuErrorNotReady) return HETCCL_GPU_ERR_NOT_READY;
  std::snprintf(tLastError, sizeof tLastError, "%s: %s: %s", call, gpuGetErrorName(err), gpuGetErrorString(err));
  const bool noDevice = err == gpuErrorNoDevice || err == gpuErrorInsufficientDriver;
  return noDevice ? HETCCL_GPU_ERR_NO_DEVICE : HETCCL_GPU_ERR_RUNTIME;
}

const char* lastError() noexcept { return tLastError; }

}  // namespace hetccl::cuda_plugin
