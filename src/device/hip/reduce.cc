// Reduce / scale / divide entry points of the HIP plugin: argument checks (shared with the CUDA plugin,
// plugin_support.hpp), then the kernels.
#include "device/hip/kernels.hpp"
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {

int reduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream) {
  if (std::optional<int> done = gpu_plugin::checkReduceArgs(dst, src, count, dataType, op)) return *done;
  return launchReduce(dst, src, count, dataType, op, stream);
}

int scale(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream) {
  if (std::optional<int> done = gpu_plugin::checkScaleArgs(dst, src, count, dataType, scalar)) return *done;
  return launchScale(dst, src, count, dataType, scalar, stream);
}

int divide(void* buf, size_t count, int dataType, uint64_t n, void* stream) {
  if (std::optional<int> done = gpu_plugin::checkDivideArgs(buf, count, dataType, n)) return *done;
  return launchDivide(buf, count, dataType, n, stream);
}

}  // namespace hetccl::hip_plugin
