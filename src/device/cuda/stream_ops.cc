// The v2 entry points of the CUDA plugin for CUDA graphs: stream operations on 64-bit words relative to
// device-resident counters (one kernel per call, src/device/gpu/stream_ops_kernels.cuh), the capture state
// of a stream, and the device address of a pointer.
#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {
namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; }

/// Why `op` is malformed, or nullptr.
const char* invalid(const hetcclGpuStreamOp_t& op) {
  if (op.kind < HETCCL_GPU_OP_WAIT || op.kind > HETCCL_GPU_OP_STAMP_CHECK) return "unknown operation kind";
  if (!op.word || !aligned(op.word)) return "word is null or not 8-byte aligned";
  if (!aligned(op.base) || !aligned(op.abort) || !aligned(op.report)) return "a pointer is not 8-byte aligned";
  if (op.kind == HETCCL_GPU_OP_STAMP_CHECK && !op.report) return "STAMP_CHECK without a report record";
  if (op.kind == HETCCL_GPU_OP_ADVANCE && op.arg[0] == 0) return "ADVANCE to a multiple of 0";
  return nullptr;
}

}  // namespace

int streamOps(void* stream, const hetcclGpuStreamOp_t* ops, unsigned count) {
  if (!ops || count == 0 || count > HETCCL_GPU_MAX_STREAM_OPS)
    return fail(HETCCL_GPU_ERR_ARGUMENT, "streamOps", "null operations or a count outside 1..MAX_STREAM_OPS");
  for (unsigned i = 0; i < count; ++i)
    if (const char* why = invalid(ops[i])) return fail(HETCCL_GPU_ERR_ARGUMENT, "streamOps", why);
  if (const int rc = preloadKernelsOnce()) return rc;
  return check(launchStreamOpsKernel(ops, count, static_cast<gpuStream_t>(stream)), "streamOps (kernel launch)");
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
