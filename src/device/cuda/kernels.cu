// The CUDA plugin's kernels: the single-source kernels of src/device/gpu instantiated once, behind the
// launchers declared in kernels.hpp.
#include "device/cuda/kernels.hpp"
#include "device/gpu/copy_kernels.cuh"
#include "device/gpu/flag_kernels.cuh"
#include "device/gpu/ll_kernels.cuh"
#include "device/gpu/reduce_kernels.cuh"
#include "device/gpu/stream_ops_kernels.cuh"

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

gpuError_t launchStreamOpsKernel(const hetcclGpuStreamOp_t* ops, unsigned count, gpuStream_t stream) {
  gpu::StreamOpBatch batch{};
  for (unsigned i = 0; i < count; ++i) batch.op[i] = ops[i];
  batch.count = count;
  return gpu::launchStreamOps(batch, stream);
}

gpuError_t launchCopyRangesKernel(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                                  gpuStream_t stream) {
  for (size_t first = 0; first < count; first += gpu::kCopyRangesPerLaunch) {
    gpu::CopyRangeBatch batch{};
    batch.count = static_cast<unsigned>(count - first < gpu::kCopyRangesPerLaunch ? count - first : gpu::kCopyRangesPerLaunch);
    for (unsigned i = 0; i < batch.count; ++i) {
      batch.dst[i] = reinterpret_cast<uint64_t>(dsts[first + i]);
      batch.src[i] = reinterpret_cast<uint64_t>(srcs[first + i]);
      batch.bytes[i] = sizes[first + i];
    }
    if (const gpuError_t err = gpu::launchCopyRanges(batch, stream)) return err;
  }
  return gpuSuccess;
}

gpuError_t launchLlAllReduceKernel(const hetcclGpuLlAllReduce_t& args, gpuStream_t stream) {
  return gpu::launchLlAllReduce(args, stream, gpuErrorInvalidValue);
}

gpuError_t preloadKernels() {
  gpuError_t err = gpu::preloadFlagKernels();
  if (err == gpuSuccess) err = gpu::preloadLlKernels();
  if (err == gpuSuccess) err = gpu::preloadStreamOpsKernel();
  if (err == gpuSuccess) err = gpu::preloadCopyKernel();
  return err == gpuSuccess ? gpu::preloadReduceKernels() : err;
}

}  // namespace hetccl::cuda_plugin
