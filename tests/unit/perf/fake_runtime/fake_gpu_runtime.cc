// A fake GPU runtime for unit_perf: the functions hetccl-perf's GpuRuntimeApi resolves, under the prefix
// "fakegpu" (fakegpuMalloc, ...), over host memory. FAKEGPU_DEVICES sets the device count (default 2;
// a negative value makes fakegpuGetDeviceCount fail with error 100, as hipErrorNoDevice does).
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace {
int gCurrent = 0;
int gStreams = 0;
}  // namespace

extern "C" {
__attribute__((visibility("default"))) int fakegpuGetDeviceCount(int* count) {
  const char* env = std::getenv("FAKEGPU_DEVICES");
  const int n = env ? std::atoi(env) : 2;
  if (n < 0) {
    *count = 0;
    return 100;
  }
  *count = n;
  return 0;
}
__attribute__((visibility("default"))) int fakegpuSetDevice(int device) {
  int n = 0;
  if (fakegpuGetDeviceCount(&n) != 0 || device < 0 || device >= n) return 101;  // invalid device
  gCurrent = device;
  return 0;
}
__attribute__((visibility("default"))) int fakegpuMalloc(void** ptr, size_t bytes) {
  *ptr = std::malloc(bytes);
  return *ptr ? 0 : 2;  // out of memory
}
__attribute__((visibility("default"))) int fakegpuFree(void* ptr) {
  std::free(ptr);
  return 0;
}
__attribute__((visibility("default"))) int fakegpuMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  if (kind != 1 && kind != 2) return 21;  // invalid memcpy direction: only HostToDevice and DeviceToHost are used
  std::memcpy(dst, src, bytes);
  return 0;
}
__attribute__((visibility("default"))) int fakegpuStreamCreate(void** stream) {
  *stream = &gStreams;
  ++gStreams;
  return 0;
}
__attribute__((visibility("default"))) int fakegpuStreamSynchronize(void* stream) { return stream == &gStreams ? 0 : 400; }
__attribute__((visibility("default"))) int fakegpuStreamDestroy(void* stream) {
  if (stream != &gStreams) return 400;
  --gStreams;
  return 0;
}
__attribute__((visibility("default"))) int fakegpuDeviceSynchronize() { return gCurrent >= 0 ? 0 : 1; }
__attribute__((visibility("default"))) const char* fakegpuGetErrorString(int code) {
  switch (code) {
    case 100: return "fakegpuErrorNoDevice";
    case 101: return "fakegpuErrorInvalidDevice";
    case 400: return "fakegpuErrorInvalidHandle";
    default: return "fakegpuErrorUnknown";
  }
}
}
