#include "gpu_runtime_api.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace hetccl::perf {
namespace {

constexpr int kMemcpyHostToDevice = 1;  // cudaMemcpyKind and hipMemcpyKind values
constexpr int kMemcpyDeviceToHost = 2;

/// The first of spec.libraries that opens; throws with every dlerror() otherwise.
void* openRuntime(const GpuRuntimeSpec& spec, std::string& openedName) {
  std::string tried;
  for (const std::string& name : spec.libraries) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      openedName = name;
      return handle;
    }
    const char* why = dlerror();
    tried += "\n  " + name + ": " + (why ? why : "unknown error");
  }
  throw std::runtime_error("--device " + spec.device + ": cannot open the " + spec.displayName + " runtime library (" +
                           spec.installHint + "); tried:" + tried);
}

template <typename Fn>
void resolve(void* handle, const GpuRuntimeSpec& spec, const std::string& library, const std::string& symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol.c_str()));
  if (!fn) throw std::runtime_error("--device " + spec.device + ": " + library + " has no function " + symbol);
}

/// `names` as given, then each under `folder`.
std::vector<std::string> withFolder(std::vector<std::string> names, const std::string& folder) {
  const size_t n = names.size();
  for (size_t i = 0; i < n; ++i) names.push_back(folder + "/" + names[i]);
  return names;
}

}  // namespace

const GpuRuntimeSpec& gpuRuntimeSpec(GpuVendor vendor) {
  static const GpuRuntimeSpec cuda{
      "cuda", "CUDA", "cuda",
      withFolder({"libcudart.so", "libcudart.so.13", "libcudart.so.12"}, "/usr/local/cuda/lib64"),
      "install the CUDA toolkit or add its lib64 folder to LD_LIBRARY_PATH", "libhetccl-cuda.so"};
  static const GpuRuntimeSpec hip{
      "hip", "HIP", "hip",
      withFolder({"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}, "/opt/rocm/lib"),
      "install ROCm or add its lib folder (e.g. /opt/rocm/lib) to LD_LIBRARY_PATH", "libhetccl-hip.so"};
  return vendor == GpuVendor::Hip ? hip : cuda;
}

GpuRuntimeApi& GpuRuntimeApi::instance(GpuVendor vendor) {
  // A failed construction is retried by the next call, and throws again.
  if (vendor == GpuVendor::Hip) {
    static GpuRuntimeApi hip(gpuRuntimeSpec(GpuVendor::Hip));
    return hip;
  }
  static GpuRuntimeApi cuda(gpuRuntimeSpec(GpuVendor::Cuda));
  return cuda;
}

GpuRuntimeApi::GpuRuntimeApi(GpuRuntimeSpec spec) : spec_(std::move(spec)) {
  void* handle = openRuntime(spec_, libraryName_);  // never closed: the runtime stays loaded until exit
  resolve(handle, spec_, libraryName_, fn("SetDevice"), setDevice_);
  resolve(handle, spec_, libraryName_, fn("GetDeviceCount"), getDeviceCount_);
  resolve(handle, spec_, libraryName_, fn("Malloc"), malloc_);
  resolve(handle, spec_, libraryName_, fn("Free"), free_);
  resolve(handle, spec_, libraryName_, fn("Memcpy"), memcpy_);
  resolve(handle, spec_, libraryName_, fn("StreamCreate"), streamCreate_);
  resolve(handle, spec_, libraryName_, fn("StreamSynchronize"), streamSynchronize_);
  resolve(handle, spec_, libraryName_, fn("StreamDestroy"), streamDestroy_);
  resolve(handle, spec_, libraryName_, fn("DeviceSynchronize"), deviceSynchronize_);
  resolve(handle, spec_, libraryName_, fn("GetErrorString"), getErrorString_);
}

void GpuRuntimeApi::check(int code, const std::string& what) const {
  if (code == 0) return;
  const char* text = getErrorString_(code);
  throw std::runtime_error("--device " + spec_.device + ": " + what + " failed: " + (text ? text : "unknown error") +
                           " (" + spec_.displayName + " error " + std::to_string(code) + ", " + libraryName_ + ")");
}

int GpuRuntimeApi::deviceCount() {
  int count = 0;
  check(getDeviceCount_(&count), fn("GetDeviceCount"));
  if (count <= 0)
    throw std::runtime_error("--device " + spec_.device + ": no " + spec_.displayName + " device is visible (" +
                             fn("GetDeviceCount") + " gave 0)");
  return count;
}

void GpuRuntimeApi::setDevice(int device) { check(setDevice_(device), fn("SetDevice") + "(" + std::to_string(device) + ")"); }

void* GpuRuntimeApi::allocDevice(size_t bytes) {
  void* ptr = nullptr;
  check(malloc_(&ptr, bytes ? bytes : 1), fn("Malloc") + "(" + std::to_string(bytes) + " bytes)");
  return ptr;
}

void GpuRuntimeApi::freeDevice(void* ptr) noexcept {
  if (ptr) free_(ptr);
}

void GpuRuntimeApi::copyToDevice(void* deviceDst, const void* hostSrc, size_t bytes) {
  if (bytes) check(memcpy_(deviceDst, hostSrc, bytes, kMemcpyHostToDevice), fn("Memcpy") + " (host to device)");
}

void GpuRuntimeApi::copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) {
  if (bytes) check(memcpy_(hostDst, deviceSrc, bytes, kMemcpyDeviceToHost), fn("Memcpy") + " (device to host)");
}

void* GpuRuntimeApi::createStream() {
  void* stream = nullptr;
  check(streamCreate_(&stream), fn("StreamCreate"));
  return stream;
}

void GpuRuntimeApi::synchronizeStream(void* stream) { check(streamSynchronize_(stream), fn("StreamSynchronize")); }

void GpuRuntimeApi::destroyStream(void* stream) noexcept {
  if (stream) streamDestroy_(stream);
}

void GpuRuntimeApi::synchronizeDevice() { check(deviceSynchronize_(), fn("DeviceSynchronize")); }

GpuChoice chooseGpuVendor(const std::string& hetcclDevice, const std::function<std::string(GpuVendor)>& unusable) {
  const std::string want = hetcclDevice.empty() ? "auto" : hetcclDevice;
  if (want == "cuda") return {GpuVendor::Cuda, "HETCCL_DEVICE=cuda"};
  if (want == "hip") return {GpuVendor::Hip, "HETCCL_DEVICE=hip"};
  if (want == "host")
    throw std::runtime_error("--device gpu: HETCCL_DEVICE=host makes host ranks, which read no GPU memory (use "
                             "--device host, or HETCCL_DEVICE=auto|cuda|hip)");
  if (want != "auto")
    throw std::runtime_error("--device gpu: HETCCL_DEVICE='" + want + "' is not one of auto, host, cuda, hip");
  const std::string cudaWhy = unusable(GpuVendor::Cuda);
  if (cudaWhy.empty()) return {GpuVendor::Cuda, "HETCCL_DEVICE=auto: the CUDA runtime sees a device"};
  const std::string hipWhy = unusable(GpuVendor::Hip);
  if (hipWhy.empty()) return {GpuVendor::Hip, "HETCCL_DEVICE=auto: no usable CUDA runtime, the HIP runtime sees a device"};
  throw std::runtime_error("--device gpu: HETCCL_DEVICE=auto and neither GPU runtime is usable (CUDA: " + cudaWhy +
                           "; HIP: " + hipWhy + ")");
}

std::string gpuRuntimeUnusableReason(GpuVendor vendor) {
  try {
    GpuRuntimeApi::instance(vendor).deviceCount();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace hetccl::perf
