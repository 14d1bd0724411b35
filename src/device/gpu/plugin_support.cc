#include "device/gpu/plugin_support.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace hetccl::gpu_plugin {
namespace {

std::atomic<hetcclGpuLogger_v1_t> gLogger{nullptr};
thread_local char tLastError[768] = "";

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; }

constexpr int kNumDataTypes = 12;  // hetccl::DataType: int8 .. bfloat16, f8e4m3, f8e5m2
constexpr int kNumOps = 6;         // hetccl::RedOpKind: sum .. premulsum

bool validType(int dataType) { return dataType >= 0 && dataType < kNumDataTypes; }

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

int failVendor(const char* call, const char* name, const char* text, bool noDevice) noexcept {
  std::snprintf(tLastError, sizeof tLastError, "%s: %s: %s", call, name, text);
  return noDevice ? HETCCL_GPU_ERR_NO_DEVICE : HETCCL_GPU_ERR_RUNTIME;
}

const char* lastError() noexcept { return tLastError; }

const char* invalidStreamOps(const hetcclGpuStreamOp_t* ops, unsigned count) noexcept {
  if (!ops || count == 0 || count > HETCCL_GPU_MAX_STREAM_OPS) return "null operations or a count outside 1..MAX_STREAM_OPS";
  for (unsigned i = 0; i < count; ++i) {
    const hetcclGpuStreamOp_t& op = ops[i];
    if (op.kind < HETCCL_GPU_OP_WAIT_GEQ || op.kind > HETCCL_GPU_OP_STAMP_CHECK) return "unknown operation kind";
    if (!op.word || !aligned(op.word)) return "word is null or not 8-byte aligned";
    if (op.kind == HETCCL_GPU_OP_STAMP_CHECK && (!op.report || !aligned(op.report)))
      return "STAMP_CHECK without an aligned report record";
  }
  return nullptr;
}

std::optional<int> checkReduceArgs(void* dst, const void* src, size_t count, int dataType, int op) noexcept {
  if (!validType(dataType) || op < 0 || op >= kNumOps)
    return fail(HETCCL_GPU_ERR_ARGUMENT, "reduce", "unknown data type or reduction operator");
  if (count == 0) return HETCCL_GPU_OK;
  if (!dst || !src) return fail(HETCCL_GPU_ERR_ARGUMENT, "reduce", "null buffer");
  return std::nullopt;
}

std::optional<int> checkScaleArgs(void* dst, const void* src, size_t count, int dataType, const void* scalar) noexcept {
  if (!validType(dataType)) return fail(HETCCL_GPU_ERR_ARGUMENT, "scale", "unknown data type");
  if (count == 0) return HETCCL_GPU_OK;
  if (!dst || !src || !scalar) return fail(HETCCL_GPU_ERR_ARGUMENT, "scale", "null buffer or scalar");
  return std::nullopt;
}

std::optional<int> checkDivideArgs(void* buf, size_t count, int dataType, uint64_t n) noexcept {
  if (!validType(dataType)) return fail(HETCCL_GPU_ERR_ARGUMENT, "divide", "unknown data type");
  if (count == 0 || n == 0) return HETCCL_GPU_OK;  // n == 0 changes nothing, as on the host
  if (!buf) return fail(HETCCL_GPU_ERR_ARGUMENT, "divide", "null buffer");
  return std::nullopt;
}

}  // namespace hetccl::gpu_plugin
