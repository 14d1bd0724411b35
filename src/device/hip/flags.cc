// Stream <-> host flag synchronisation of the HIP plugin: hipStreamWaitValue64 / hipStreamWriteValue64 where
// the device supports them (queried, never assumed), else the polling / writing kernels.
#include <cstdint>

#include "device/hip/kernels.hpp"
#include "device/hip/plugin_functions.hpp"
#include "device/hip/plugin_state.hpp"

namespace hetccl::hip_plugin {

namespace {

/// The device-side address of a pinned host word, or an error naming `call` when the word is not pinned,
/// mapped memory or not 8-byte aligned.
int deviceAddressOf(const uint64_t* flag, const char* call, uint64_t** deviceFlag) {
  if (!flag || reinterpret_cast<uintptr_t>(flag) % 8 != 0)
    return fail(HETCCL_GPU_ERR_ARGUMENT, call, "flag is null or not 8-byte aligned");
  void* mapped = nullptr;
  const int rc = check(rt().hipHostGetDevicePointer(&mapped, const_cast<uint64_t*>(flag), 0), call);
  if (rc != HETCCL_GPU_OK) return rc;
  *deviceFlag = static_cast<uint64_t*>(mapped);
  return HETCCL_GPU_OK;
}

bool useNative(unsigned flags) { return !(flags & HETCCL_GPU_FLAG_FORCE_KERNEL) && nativeOnCurrentDevice(); }

}  // namespace

int nativeWait(void* stream, uint64_t* deviceWord, uint64_t value, bool equal) {
  return check(rt().hipStreamWaitValue64(stream, deviceWord, value,
                                         equal ? api::hipStreamWaitValueEq : api::hipStreamWaitValueGte, ~0ull),
               "hipStreamWaitValue64");
}

int nativeWrite(void* stream, uint64_t* deviceWord, uint64_t value) {
  return check(rt().hipStreamWriteValue64(stream, deviceWord, value, 0), "hipStreamWriteValue64");
}

int streamWaitFlag(void* stream, const uint64_t* flag, uint64_t value, unsigned flags) {
  uint64_t* deviceFlag = nullptr;
  if (const int rc = deviceAddressOf(flag, "streamWaitFlag (hipHostGetDevicePointer)", &deviceFlag)) return rc;
  if (useNative(flags)) return nativeWait(stream, deviceFlag, value, false);
  return launchWaitFlag(deviceFlag, value, stream);  // loads every kernel of the device first
}

int streamWriteFlag(void* stream, uint64_t* flag, uint64_t value, unsigned flags) {
  uint64_t* deviceFlag = nullptr;
  if (const int rc = deviceAddressOf(flag, "streamWriteFlag (hipHostGetDevicePointer)", &deviceFlag)) return rc;
  if (useNative(flags)) return nativeWrite(stream, deviceFlag, value);
  return launchWriteFlag(deviceFlag, value, stream);
}

int flagMethod(int* native) {
  if (!native) return fail(HETCCL_GPU_ERR_ARGUMENT, "flagMethod", "null result pointer");
  *native = useNative(0) ? 1 : 0;
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::hip_plugin
