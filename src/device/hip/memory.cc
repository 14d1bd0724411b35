// Device memory, pinned host memory, registration of existing host memory, pointer queries and
// synchronous copies of the HIP plugin.
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {

int allocDevice(void** ptr, size_t bytes) {
  if (!ptr || bytes == 0) return fail(HETCCL_GPU_ERR_ARGUMENT, "allocDevice", "null result pointer or 0 bytes");
  *ptr = nullptr;
  RelaxedCaptureMode relaxed;
  return check(rt().hipMalloc(ptr, bytes), "hipMalloc");
}

int freeDevice(void* ptr) {
  RelaxedCaptureMode relaxed;
  return ptr ? check(rt().hipFree(ptr), "hipFree") : HETCCL_GPU_OK;
}

int allocPinned(void** ptr, size_t bytes) {
  if (!ptr || bytes == 0) return fail(HETCCL_GPU_ERR_ARGUMENT, "allocPinned", "null result pointer or 0 bytes");
  *ptr = nullptr;
  RelaxedCaptureMode relaxed;
  return check(rt().hipHostMalloc(ptr, bytes, api::hipHostMallocMapped | api::hipHostMallocPortable), "hipHostMalloc");
}

int freePinned(void* ptr) {
  RelaxedCaptureMode relaxed;
  return ptr ? check(rt().hipHostFree(ptr), "hipHostFree") : HETCCL_GPU_OK;
}

int hostRegister(void* ptr, size_t bytes) {
  if (!ptr || bytes == 0) return fail(HETCCL_GPU_ERR_ARGUMENT, "hostRegister", "null pointer or 0 bytes");
  return check(rt().hipHostRegister(ptr, bytes, api::hipHostRegisterMapped | api::hipHostRegisterPortable),
               "hipHostRegister");
}

int hostUnregister(void* ptr) {
  if (!ptr) return fail(HETCCL_GPU_ERR_ARGUMENT, "hostUnregister", "null pointer");
  return check(rt().hipHostUnregister(ptr), "hipHostUnregister");
}

int pointerAttributes(const void* ptr, api::PointerAttributes* attributes, bool* known) {
  *attributes = api::PointerAttributes{};
  const api::hipError_t err = rt().hipPointerGetAttributes(attributes, ptr);
  if (err == api::hipErrorInvalidValue) {  // ROCm 5.x/6.x: memory the runtime does not know (plain host memory)
    (void)rt().hipGetLastError();
    *known = false;
    return HETCCL_GPU_OK;
  }
  *known = err == api::hipSuccess;
  return check(err, "hipPointerGetAttributes");
}

int pointerQuery(const void* ptr, int* memType, int* device) {
  if (!memType || !device) return fail(HETCCL_GPU_ERR_ARGUMENT, "pointerQuery", "null result pointer");
  *memType = HETCCL_GPU_MEM_HOST;
  *device = -1;
  if (!ptr) return HETCCL_GPU_OK;
  api::PointerAttributes a{};
  bool known = false;
  if (const int rc = pointerAttributes(ptr, &a, &known)) return rc;
  if (!known) return HETCCL_GPU_OK;
  if (a.isManaged) {
    *memType = HETCCL_GPU_MEM_MANAGED;
    *device = a.device;
    return HETCCL_GPU_OK;
  }
  // hipMemoryType's values changed in ROCm 6.0 (hip_api.hpp): read them by the runtime's major version.
  const bool v6 = rt().major >= 6;
  const int host = v6 ? api::MemoryType6::kHost : api::MemoryType5::kHost;
  const int deviceType = v6 ? api::MemoryType6::kDevice : api::MemoryType5::kDevice;
  if (a.type == host) {
    *memType = HETCCL_GPU_MEM_PINNED;
  } else if (a.type == deviceType || (!v6 && a.type == api::MemoryType5::kArray) || (v6 && a.type == api::MemoryType6::kArray)) {
    *memType = HETCCL_GPU_MEM_DEVICE;
    *device = a.device;
  } else if (v6 && (a.type == api::MemoryType6::kManaged || a.type == api::MemoryType6::kUnified)) {
    *memType = HETCCL_GPU_MEM_MANAGED;
    *device = a.device;
  }  // else unregistered host memory
  return HETCCL_GPU_OK;
}

int memcpySync(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst || !src) return fail(HETCCL_GPU_ERR_ARGUMENT, "memcpySync", "null pointer");
  // As with CUDA, a device-to-device hipMemcpy may return early: wait for the null stream.
  if (const int rc = check(rt().hipMemcpy(dst, src, bytes, api::hipMemcpyDefault), "hipMemcpy")) return rc;
  return check(rt().hipStreamSynchronize(nullptr), "hipStreamSynchronize (after hipMemcpy)");
}

int memsetSync(void* dst, int byteValue, size_t bytes) {
  if (bytes == 0) return HETCCL_GPU_OK;
  if (!dst) return fail(HETCCL_GPU_ERR_ARGUMENT, "memsetSync", "null pointer");
  if (const int rc = check(rt().hipMemset(dst, byteValue, bytes), "hipMemset")) return rc;
  return check(rt().hipStreamSynchronize(nullptr), "hipStreamSynchronize (after hipMemset)");
}

}  // namespace hetccl::hip_plugin
