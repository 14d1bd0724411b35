// Device memory, pinned host memory, registration of existing host memory, pointer queries and
// synchronous copies of the CUDA plugin.
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"

namespace hetccl::cuda_plugin {

int allocDevice(void** ptr, size_t bytes) {
  if (!ptr || bytes == 0) return fail(HETCCL_GPU_ERR_ARGUMENT, "allocDevice", "null result pointer or 0 bytes");
  *ptr = nullptr;
  RelaxedCaptureMode relaxed;
  return check(gpuMalloc(ptr, bytes), "cudaMalloc");
}

int freeDevice(void* ptr) {
  RelaxedCaptureMode relaxed;
  return ptr ? check(gpuFree(ptr), "cudaFree") : HETCCL_GPU_OK;
}

int allocPinned(void** ptr, size_t bytes) {
  if (!ptr || bytes == 0) return fail(HETCCL_GPU_ERR_ARGUMENT, "allocPinned", "null result pointer or 0 bytes");
  *ptr = nullptr;
  RelaxedCaptureMode relaxed;
  return check(gpuHostAlloc(ptr, bytes, gpuHostAllocMapped | gpuHostAllocPortable), "cudaHostAlloc");
}

int freePinned(void* ptr) {
  RelaxedCaptureMode relaxed;
  return ptr ? check(gpuFreeHost(ptr), "cudaFreeHost") : HETCCL_GPU_OK;
}

int hostRegister(void* ptr, size_t bytes) {
  if (!ptr || bytes == 0) return fail(HETCCL_GPU_ERR_ARGUMENT, "hostRegister", "null pointer or 0 bytes");
  return check(gpuHostRegister(ptr, bytes, gpuHostRegisterMapped | gpuHostRegisterPortable), "cudaHostRegister");
}

int hostUnregister(void* ptr) {
  if (!ptr) return fail(HETCCL_GPU_ERR_ARGUMENT, "hostUnregister", "null pointer");
  return check(gpuHostUnregister(ptr), "cudaHostUnregister");
}

int pointerQuery(const void* ptr, int* memType, int* device) {
  if (!memType || !device) return fail(HETCCL_GPU_ERR_ARGUMENT, "pointerQuery", "null result pointer");
  *memType = HETCCL_GPU_MEM_HOST;
  *device = -1;
  if (!ptr) return HETCCL_GPU_OK;
  gpuPointerAttributes attributes{};
  const int rc = check(gpuPointerGetAttributes(&attributes, ptr), "cudaPointerGetAttributes");
  if (rc != HETCCL_GPU_OK) return rc;
  switch (attributes.type) {
    case gpuMemoryTypeHost: *memType = HETCCL_GPU_MEM_PINNED; break;
    case gpuMemoryTypeDevice: *memType = HETCCL_GPU_MEM_DEVICE; *device = attributes.device; break;
    case gpuMemoryTypeManaged: *memType = HETCCL_GPU_MEM_MANAGED; *device = attributes.device; break;
    default: break;  // unregistered host memory
  }
  return HETCCL_GPU_OK;
}

int memcpySync(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst || !src) return fail(HETCCL_GPU_ERR_ARGUMENT, "memcpySync", "null pointer");
  // cudaMemcpy may return before a device-to-device copy is done: wait for the (legacy) null stream.
  if (const int rc = check(gpuMemcpy(dst, src, bytes, gpuMemcpyDefault), "cudaMemcpy")) return rc;
  return check(gpuStreamSynchronize(nullptr), "cudaStreamSynchronize (after cudaMemcpy)");
}

int memsetSync(void* dst, int byteValue, size_t bytes) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst) return fail(HETCCL_GPU_ERR_ARGUMENT, "memsetSync", "null pointer");
  if (const int rc = check(gpuMemset(dst, byteValue, bytes), "cudaMemset")) return rc;  // asynchronous for device memory
  return check(gpuStreamSynchronize(nullptr), "cudaStreamSynchronize (after cudaMemset)");
}

}  // namespace hetccl::cuda_plugin
