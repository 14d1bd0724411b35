// Streams, events and asynchronous copies of the CUDA plugin.
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {
namespace {

gpuStream_t asStream(void* stream) { return static_cast<gpuStream_t>(stream); }
gpuEvent_t asEvent(void* event) { return static_cast<gpuEvent_t>(event); }

}  // namespace

int streamCreate(void** stream) {
  if (!stream) return fail(HETCCL_GPU_ERR_ARGUMENT, "streamCreate", "null result pointer");
  gpuStream_t created = nullptr;
  RelaxedCaptureMode relaxed;
  const int rc = check(gpuStreamCreateWithFlags(&created, gpuStreamNonBlocking), "cudaStreamCreateWithFlags");
  *stream = created;
  return rc;
}

int streamDestroy(void* stream) {
  return stream ? check(gpuStreamDestroy(asStream(stream)), "cudaStreamDestroy") : HETCCL_GPU_OK;
}

int streamSynchronize(void* stream) { return check(gpuStreamSynchronize(asStream(stream)), "cudaStreamSynchronize"); }

int streamQuery(void* stream) { return check(gpuStreamQuery(asStream(stream)), "cudaStreamQuery"); }

int eventCreate(void** event) {
  if (!event) return fail(HETCCL_GPU_ERR_ARGUMENT, "eventCreate", "null result pointer");
  gpuEvent_t created = nullptr;
  RelaxedCaptureMode relaxed;
  const int rc = check(gpuEventCreateWithFlags(&created, gpuEventDisableTiming), "cudaEventCreateWithFlags");
  *event = created;
  return rc;
}

int eventDestroy(void* event) {
  return event ? check(gpuEventDestroy(asEvent(event)), "cudaEventDestroy") : HETCCL_GPU_OK;
}

int eventRecord(void* event, void* stream) {
  if (!event) return fail(HETCCL_GPU_ERR_ARGUMENT, "eventRecord", "null event");
  return check(gpuEventRecord(asEvent(event), asStream(stream)), "cudaEventRecord");
}

int eventQuery(void* event) {
  if (!event) return fail(HETCCL_GPU_ERR_ARGUMENT, "eventQuery", "null event");
  return check(gpuEventQuery(asEvent(event)), "cudaEventQuery");
}

int eventSynchronize(void* event) {
  if (!event) return fail(HETCCL_GPU_ERR_ARGUMENT, "eventSynchronize", "null event");
  return check(gpuEventSynchronize(asEvent(event)), "cudaEventSynchronize");
}

int streamWaitEvent(void* stream, void* event) {
  if (!event) return fail(HETCCL_GPU_ERR_ARGUMENT, "streamWaitEvent", "null event");
  return check(gpuStreamWaitEvent(asStream(stream), asEvent(event), 0), "cudaStreamWaitEvent");
}

int memcpyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst || !src) return fail(HETCCL_GPU_ERR_ARGUMENT, "memcpyAsync", "null pointer");
  return check(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, asStream(stream)), "cudaMemcpyAsync");
}

int memsetAsync(void* dst, int byteValue, size_t bytes, void* stream) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst) return fail(HETCCL_GPU_ERR_ARGUMENT, "memsetAsync", "null pointer");
  return check(gpuMemsetAsync(dst, byteValue, bytes, asStream(stream)), "cudaMemsetAsync");
}

}  // namespace hetccl::cuda_plugin
