// The CUDA plugin's kernels: the single-source kernels of src/device/gpu instantiated once, behind the
// launchers declared in kernels.hpp.
#include "device/cuda/kernels.hpp"
#include "device/gpu/flag_kernels.cuh"
#include "device/gpu/reduce_kernels.cuh"

namespace hetccl::cuda_plugin {

gpuError_t launchReduceKernel(void* dst, const void* src, size_t count, int dataType, int op, gpuStream_t stream) {
  return gpu::launchReduce(dst, src, count, dataType, op, stream, gpuErrorInvalidValue);
}

gpuError_t launchScaleKernel(void* dst, const void* src, size_t count, int dataType, const void* scalar,
                             gpuStream_t stream) {
  return gpu::launchScale(dst, src, count, dataType, scalar, stream, gpuErrorInvalidValue);
}

gpuError_t launchDivideKernel(void* buf, size_t count, int dataType, uint64_t n, gpuStream_t stream) {
  return gpu::launchDivide(buf, count, dataType, n, stream, gpuErrorInvalidValue);
}

gpuError_t launchWaitFlagKernel(const uint64_t* deviceFlag, uint64_t value, gpuStream_t stream) {
  return gpu::launchWaitFlag(deviceFlag, value, stream);
}

gpuError_t launchWriteFlagKernel(uint64_t* deviceFlag, uint64_t value, gpuStream_t stream) {
  return gpu::launchWriteFlag(deviceFlag, value, stream);
}

gpuError_t preloadKernels() {
  const gpuError_t err = gpu::preloadFlagKernels();
  return err == gpuSuccess ? gpu::preloadReduceKernels() : err;
}

}  // namespace hetccl::cuda_plugin
