// The v2 entry points of the HIP plugin: batched stream operations on 64-bit words with call-stamp checks
// (stream wait/write-value operations, or the hetccl_stream_ops kernel), the capture state of a stream, and
// the device address of a pointer.
#include "device/hip/kernels.hpp"
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {

int nativeWait(void* stream, uint64_t* deviceWord, uint64_t value, bool equal);  // flags.cc
int nativeWrite(void* stream, uint64_t* deviceWord, uint64_t value);

namespace {


}  // namespace

// Runs of waits and writes go to hipStreamWaitValue64 / hipStreamWriteValue64 (one call each: HIP has no
// batched form on every supported version); stamp checks, and everything where the device has no stream
// wait-value support, run in the one-thread kernel.
int streamOps(void* stream, const hetcclGpuStreamOp_t* ops, unsigned count) {
  if (const char* why = gpu_plugin::invalidStreamOps(ops, count)) return fail(HETCCL_GPU_ERR_ARGUMENT, "streamOps", why);
  const bool native = nativeOnCurrentDevice();
  auto inKernel = [&](const hetcclGpuStreamOp_t& op) {
    return !native || op.kind == HETCCL_GPU_OP_STAMP_CHECK || (op.flags & HETCCL_GPU_FLAG_FORCE_KERNEL);
  };
  for (unsigned begin = 0; begin < count;) {
    const bool kernel = inKernel(ops[begin]);
    unsigned end = begin + 1;
    while (end < count && inKernel(ops[end]) == kernel) ++end;
    if (kernel) {
      if (const int rc = launchStreamOps(ops + begin, end - begin, stream)) return rc;
    } else {
      for (unsigned i = begin; i < end; ++i) {
        const int rc = ops[i].kind == HETCCL_GPU_OP_WRITE
                           ? nativeWrite(stream, ops[i].word, ops[i].value)
                           : nativeWait(stream, ops[i].word, ops[i].value, ops[i].kind == HETCCL_GPU_OP_WAIT_EQ);
        if (rc) return rc;
      }
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
  int status = api::hipStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (const int rc = check(rt().hipStreamGetCaptureInfo(stream, &status, &id), "hipStreamGetCaptureInfo")) return rc;
  *capturing = status == api::hipStreamCaptureStatusActive ? 1 : 0;
  *captureId = *capturing ? id : 0;
  return HETCCL_GPU_OK;
}

int devicePointer(const void* ptr, void** devicePtr) {
  if (!ptr || !devicePtr) return fail(HETCCL_GPU_ERR_ARGUMENT, "devicePointer", "null pointer");
  *devicePtr = nullptr;
  api::PointerAttributes a{};
  bool known = false;
  if (const int rc = pointerAttributes(ptr, &a, &known)) return rc;
  if (!known || !a.devicePointer)
    return fail(HETCCL_GPU_ERR_ARGUMENT, "devicePointer", "the pointer is neither device nor pinned/registered memory");
  *devicePtr = a.devicePointer;  // the runtime offsets it for interior pointers, as CUDA does
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::hip_plugin
