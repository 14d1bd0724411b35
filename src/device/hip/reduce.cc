// Reduce / scale / divide entry points of the HIP plugin: argument checks, then the kernels.
#include "device/hip/kernels.hpp"
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {
namespace {

constexpr int kNumDataTypes = 12;  // hetccl::DataType: int8 .. bfloat16, f8e4m3, f8e5m2
constexpr int kNumOps = 6;         // hetccl::RedOpKind: sum .. premulsum

bool validType(int dataType) { return dataType >= 0 && dataType < kNumDataTypes; }

}  // namespace

int reduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream) {
  if (!validType(dataType) || op < 0 || op >= kNumOps)
    return fail(HETCCL_GPU_ERR_ARGUMENT, "reduce", "unknown data type or reduction operator");
  if (count == 0) return HETCCL_GPU_OK;
  if (!dst || !src) return fail(HETCCL_GPU_ERR_ARGUMENT, "reduce", "null buffer");
  return launchReduce(dst, src, count, dataType, op, stream);
}

int scale(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream) {
  if (!validType(dataType)) return fail(HETCCL_GPU_ERR_ARGUMENT, "scale", "unknown data type");
  if (count == 0) return HETCCL_GPU_OK;
  if (!dst || !src || !scalar) return fail(HETCCL_GPU_ERR_ARGUMENT, "scale", "null buffer or scalar");
  return launchScale(dst, src, count, dataType, scalar, stream);
}

int divide(void* buf, size_t count, int dataType, uint64_t n, void* stream) {
  if (!validType(dataType)) return fail(HETCCL_GPU_ERR_ARGUMENT, "divide", "unknown data type");
  if (count == 0 || n == 0) return HETCCL_GPU_OK;  // n == 0 changes nothing, as on the host
  if (!buf) return fail(HETCCL_GPU_ERR_ARGUMENT, "divide", "null buffer");
  return launchDivide(buf, count, dataType, n, stream);
}

}  // namespace hetccl::hip_plugin
