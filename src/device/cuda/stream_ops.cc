// The v2 entry points of the CUDA plugin: batched stream operations on 64-bit words with call-stamp checks
// (stream memory operations, or src/device/gpu/stream_ops_kernels.cuh), the capture state of a stream, and
// the device address of a pointer.
#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"
#include "device/cuda/stream_memops.hpp"

namespace hetccl::cuda_plugin {
namespace {


}  // namespace

// Runs of waits and writes go to the driver's stream memory operations (no kernel occupies the stream while
// it waits, and a GPU shared by several processes is not held by a spinning kernel); stamp checks, and
// everything where the device has no 64-bit stream memory operations, run in the one-thread kernel.
int streamOps(void* stream, const hetcclGpuStreamOp_t* ops, unsigned count) {
  if (const char* why = gpu_plugin::invalidStreamOps(ops, count)) return fail(HETCCL_GPU_ERR_ARGUMENT, "streamOps", why);
  const auto s = static_cast<gpuStream_t>(stream);
  const bool native = nativeOnCurrentDevice();
  // Before any wait, native or not: a kernel loaded lazily while a stream of the process waits can hang
  // the load (the copy kernel behind a native wait, CUDA 13: bench/results/rma_copy_kernel_gpu_2026-11-25).
  if (const int rc = preloadKernelsOnce()) return rc;
  auto inKernel = [&](const hetcclGpuStreamOp_t& op) {
    return !native || op.kind == HETCCL_GPU_OP_STAMP_CHECK || (op.flags & HETCCL_GPU_FLAG_FORCE_KERNEL);
  };
  for (unsigned begin = 0; begin < count;) {
    const bool kernel = inKernel(ops[begin]);
    unsigned end = begin + 1;
    while (end < count && inKernel(ops[end]) == kernel) ++end;
    if (kernel) {
      if (const int rc = check(launchStreamOpsKernel(ops + begin, end - begin, s), "streamOps (kernel launch)"))
        return rc;
    } else if (const int rc = nativeStreamOps(s, ops + begin, end - begin)) {
      return rc;
    }
    begin = end;
  }
  return HETCCL_GPU_OK;
}

int streamCaptureInfo(void* stream, int* capturing, uint64_t* captureId) {
  if (!capturing || !captureId) return fail(HETCCL_GPU_ERR_ARGUMENT, "streamCaptureInfo", "null result pointer");
  *capturing = 0;
  *captureId = 0;
  if (!stream) return HETCCL_GPU_OK;  // the legacy default stream is never captured
  gpuStreamCaptureStatus status{};
  unsigned long long id = 0;
  if (const int rc = check(gpuStreamGetCaptureInfo(static_cast<gpuStream_t>(stream), &status, &id),
                           "cudaStreamGetCaptureInfo"))
    return rc;
  *capturing = status == gpuStreamCaptureStatusActive ? 1 : 0;
  *captureId = *capturing ? id : 0;
  return HETCCL_GPU_OK;
}

int devicePointer(const void* ptr, void** devicePtr) {
  if (!ptr || !devicePtr) return fail(HETCCL_GPU_ERR_ARGUMENT, "devicePointer", "null pointer");
  *devicePtr = nullptr;
  gpuPointerAttributes attributes{};
  if (const int rc = check(gpuPointerGetAttributes(&attributes, ptr), "cudaPointerGetAttributes")) return rc;
  if (!attributes.devicePointer)
    return fail(HETCCL_GPU_ERR_ARGUMENT, "devicePointer", "the pointer is neither device nor pinned/registered memory");
  *devicePtr = attributes.devicePointer;
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::cuda_plugin
