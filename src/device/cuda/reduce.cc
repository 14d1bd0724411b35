// Reduce / scale / divide entry points of the CUDA plugin: argument checks (shared with the HIP plugin,
// plugin_support.hpp), then the kernels.
#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {

int reduce(void* dst, const void* src, size_t count, int dataType, int op, void* stream) {
  if (std::optional<int> done = gpu_plugin::checkReduceArgs(dst, src, count, dataType, op)) return *done;
  return check(launchReduceKernel(dst, src, count, dataType, op, static_cast<gpuStream_t>(stream)),
               "reduce (kernel launch)");
}

int scale(void* dst, const void* src, size_t count, int dataType, const void* scalar, void* stream) {
  if (std::optional<int> done = gpu_plugin::checkScaleArgs(dst, src, count, dataType, scalar)) return *done;
  return check(launchScaleKernel(dst, src, count, dataType, scalar, static_cast<gpuStream_t>(stream)),
               "scale (kernel launch)");
}

int divide(void* buf, size_t count, int dataType, uint64_t n, void* stream) {
  if (std::optional<int> done = gpu_plugin::checkDivideArgs(buf, count, dataType, n)) return *done;
  return check(launchDivideKernel(buf, count, dataType, n, static_cast<gpuStream_t>(stream)),
               "divide (kernel launch)");
}

}  // namespace hetccl::cuda_plugin
