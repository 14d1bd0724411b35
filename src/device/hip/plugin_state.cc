#include "device/hip/plugin_state.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace hetccl::hip_plugin {
namespace {

std::atomic<hetcclGpuLogger_v1_t> gLogger{nullptr};
thread_local char tLastError[768] = "";

}  // namespace

void setLogger(hetcclGpuLogger_v1_t logger) noexcept { gLogger.store(logger); }

void logf(int level, const char* file, int line, const char* format, ...) noexcept {
  const hetcclGpuLogger_v1_t logger = gLogger.load();
  if (!logger) return;
  char message[768];
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

int check(api::hipError_t err, const char* call) noexcept {
  if (err == api::hipSuccess) return HETCCL_GPU_OK;
  const api::Runtime& r = rt();
  if (r.hipGetLastError) (void)r.hipGetLastError();  // clear it, so it does not surface in a later call
  if (err == api::hipErrorNotReady) return HETCCL_GPU_ERR_NOT_READY;
  const char* name = r.hipGetErrorName ? r.hipGetErrorName(err) : nullptr;
  const char* text = r.hipGetErrorString ? r.hipGetErrorString(err) : nullptr;
  std::snprintf(tLastError, sizeof tLastError, "%s: %s: %s", call, name ? name : "hipError",
                text ? text : "unknown HIP error");
  const bool noDevice = err == api::hipErrorNoDevice || err == api::hipErrorInsufficientDriver;
  return noDevice ? HETCCL_GPU_ERR_NO_DEVICE : HETCCL_GPU_ERR_RUNTIME;
}

const char* lastError() noexcept { return tLastError; }

}  // namespace hetccl::hip_plugin
