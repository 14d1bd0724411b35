// Streams, events and asynchronous copies of the CUDA plugin.
#include <atomic>

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

int memcpyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count, void* stream) {
  if (count && (!dsts || !srcs || !sizes)) return fail(HETCCL_GPU_ERR_ARGUMENT, "memcpyBatchAsync", "null array");
  // cudaMemcpyBatchAsync (12.8+) takes no zero-sized copies and no null stream; a driver that refuses it
  // (cudaErrorNotSupported and the like) is remembered and the copies go one by one.
  static std::atomic<bool> batchRefused{false};
  size_t nonEmpty = 0;
  for (size_t i = 0; i < count; ++i) nonEmpty += sizes[i] != 0;
  if (nonEmpty == count && count > 1 && stream && !batchRefused.load(std::memory_order_relaxed)) {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t attrIndex = 0;
    const cudaError_t err = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &attrIndex, 1, asStream(stream));
    if (err == cudaSuccess) return HETCCL_GPU_OK;
    (void)cudaGetLastError();
    batchRefused.store(true, std::memory_order_relaxed);
    CUDA_PLUGIN_INFO("cudaMemcpyBatchAsync refused (%s): batched copies go one by one", cudaGetErrorString(err));
  }
  for (size_t i = 0; i < count; ++i)
    if (const int rc = memcpyAsync(dsts[i], srcs[i], sizes[i], stream)) return rc;
  return HETCCL_GPU_OK;
}

int memsetAsync(void* dst, int byteValue, size_t bytes, void* stream) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst) return fail(HETCCL_GPU_ERR_ARGUMENT, "memsetAsync", "null pointer");
  return check(gpuMemsetAsync(dst, byteValue, bytes, asStream(stream)), "cudaMemsetAsync");
}

}  // namespace hetccl::cuda_plugin
