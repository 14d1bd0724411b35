// Stream <-> host flag synchronisation of the CUDA plugin: the driver's stream memory operations where
// the device supports them, else the polling / writing kernels of src/device/gpu/flag_kernels.cuh.
#include <atomic>
#include <cstdint>

#include "device/cuda/kernels.hpp"
#include "device/cuda/plugin_functions.hpp"
#include "device/cuda/plugin_state.hpp"
#include "device/cuda/stream_memops.hpp"

namespace hetccl::cuda_plugin {

namespace {

/// The device-side address of a pinned host word, or an error naming `call` when the word is not pinned,
/// mapped memory or not 8-byte aligned.
int deviceAddressOf(const uint64_t* flag, const char* call, uint64_t** deviceFlag) {
  if (!flag || reinterpret_cast<uintptr_t>(flag) % 8 != 0)
    return fail(HETCCL_GPU_ERR_ARGUMENT, call, "flag is null or not 8-byte aligned");
  void* mapped = nullptr;
  const int rc = check(gpuHostGetDevicePointer(&mapped, const_cast<uint64_t*>(flag), 0), call);
  if (rc != HETCCL_GPU_OK) return rc;
  *deviceFlag = static_cast<uint64_t*>(mapped);
  return HETCCL_GPU_OK;
}

bool useNative(unsigned flags) { return !(flags & HETCCL_GPU_FLAG_FORCE_KERNEL) && nativeOnCurrentDevice(); }

}  // namespace

int preloadKernelsOnce() {
  static std::atomic<bool> loaded[64];
  int device = 0;
  if (const int rc = check(gpuGetDevice(&device), "cudaGetDevice")) return rc;
  const bool tracked = device >= 0 && device < 64;
  if (tracked && loaded[device].load(std::memory_order_acquire)) return HETCCL_GPU_OK;
  RelaxedCaptureMode relaxed;  // may be the first call, made while the stream is being captured
  const int rc = check(preloadKernels(), "loading the plugin's kernels (cudaFuncGetAttributes)");
  if (rc == HETCCL_GPU_OK && tracked) loaded[device].store(true, std::memory_order_release);
  return rc;
}

int streamWaitFlag(void* stream, const uint64_t* flag, uint64_t value, unsigned flags) {
  uint64_t* deviceFlag = nullptr;
  if (const int rc = deviceAddressOf(flag, "streamWaitFlag (cudaHostGetDevicePointer)", &deviceFlag)) return rc;
  const auto s = static_cast<gpuStream_t>(stream);
  // Before any wait, native or not: a kernel loaded lazily (at its first launch) while a stream of the
  // process waits can hang the load (seen with the copy kernel behind a native wait, CUDA 13).
  if (const int rc = preloadKernelsOnce()) return rc;
  if (useNative(flags)) return nativeWaitFlag(s, deviceFlag, value);
  return check(launchWaitFlagKernel(deviceFlag, value, s), "streamWaitFlag (polling kernel launch)");
}

int streamWriteFlag(void* stream, uint64_t* flag, uint64_t value, unsigned flags) {
  uint64_t* deviceFlag = nullptr;
  if (const int rc = deviceAddressOf(flag, "streamWriteFlag (cudaHostGetDevicePointer)", &deviceFlag)) return rc;
  const auto s = static_cast<gpuStream_t>(stream);
  if (useNative(flags)) return nativeWriteFlag(s, deviceFlag, value);
  if (const int rc = preloadKernelsOnce()) return rc;
  return check(launchWriteFlagKernel(deviceFlag, value, s), "streamWriteFlag (kernel launch)");
}

int flagMethod(int* native) {
  if (!native) return fail(HETCCL_GPU_ERR_ARGUMENT, "flagMethod", "null result pointer");
  *native = useNative(0) ? 1 : 0;
  return HETCCL_GPU_OK;
}

}  // namespace hetccl::cuda_plugin
