#include "cuda_runtime.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace hetccl::perf {
namespace {

constexpr int kMemcpyHostToDevice = 1;  // cudaMemcpyKind values
constexpr int kMemcpyDeviceToHost = 2;

constexpr const char* kLibraryNames[] = {
    "libcudart.so", "libcudart.so.13", "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so",
    "/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.12"};

/// The first library of kLibraryNames that opens; throws with every dlerror() otherwise.
void* openRuntime(std::string& openedName) {
  std::string tried;
  for (const char* name : kLibraryNames) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      openedName = name;
      return handle;
    }
    const char* why = dlerror();
    tried += std::string("\n  ") + name + ": " + (why ? why : "unknown error");
  }
  throw std::runtime_error("--device cuda: cannot open the CUDA runtime library (install the CUDA toolkit or add "
                           "its lib64 folder to LD_LIBRARY_PATH); tried:" + tried);
}

template <typename Fn>
void resolve(void* handle, const std::string& library, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!fn) throw std::runtime_error("--device cuda: " + library + " has no function " + symbol);
}

}  // namespace

CudaRuntime& CudaRuntime::instance() {
  static CudaRuntime runtime;  // a failed construction is retried by the next call, and throws again
  return runtime;
}

CudaRuntime::CudaRuntime() {
  void* handle = openRuntime(libraryName_);  // never closed: the runtime stays loaded until exit
  resolve(handle, libraryName_, "cudaSetDevice", setDevice_);
  resolve(handle, libraryName_, "cudaGetDeviceCount", getDeviceCount_);
  resolve(handle, libraryName_, "cudaMalloc", malloc_);
  resolve(handle, libraryName_, "cudaFree", free_);
  resolve(handle, libraryName_, "cudaMemcpy", memcpy_);
  resolve(handle, libraryName_, "cudaStreamCreate", streamCreate_);
  resolve(handle, libraryName_, "cudaStreamSynchronize", streamSynchronize_);
  resolve(handle, libraryName_, "cudaStreamDestroy", streamDestroy_);
  resolve(handle, libraryName_, "cudaDeviceSynchronize", deviceSynchronize_);
  resolve(handle, libraryName_, "cudaGetErrorString", getErrorString_);
}

void CudaRuntime::check(int code, const char* what) const {
  if (code == 0) return;
  const char* text = getErrorString_(code);
  throw std::runtime_error(std::string("--device cuda: ") + what + " failed: " + (text ? text : "unknown error") +
                           " (CUDA error " + std::to_string(code) + ", " + libraryName_ + ")");
}

int CudaRuntime::deviceCount() {
  int count = 0;
  check(getDeviceCount_(&count), "cudaGetDeviceCount");
  if (count <= 0) throw std::runtime_error("--device cuda: no CUDA device is visible (cudaGetDeviceCount gave 0)");
  return count;
}

void CudaRuntime::setDevice(int device) {
  check(setDevice_(device), ("cudaSetDevice(" + std::to_string(device) + ")").c_str());
}

void* CudaRuntime::allocDevice(size_t bytes) {
  void* ptr = nullptr;
  check(malloc_(&ptr, bytes ? bytes : 1), ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str());
  return ptr;
}

void CudaRuntime::freeDevice(void* ptr) noexcept {
  if (ptr) free_(ptr);
}

void CudaRuntime::copyToDevice(void* deviceDst, const void* hostSrc, size_t bytes) {
  if (bytes) check(memcpy_(deviceDst, hostSrc, bytes, kMemcpyHostToDevice), "cudaMemcpy (host to device)");
}

void CudaRuntime::copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) {
  if (bytes) check(memcpy_(hostDst, deviceSrc, bytes, kMemcpyDeviceToHost), "cudaMemcpy (device to host)");
}

void* CudaRuntime::createStream() {
  void* stream = nullptr;
  check(streamCreate_(&stream), "cudaStreamCreate");
  return stream;
}

void CudaRuntime::synchronizeStream(void* stream) { check(streamSynchronize_(stream), "cudaStreamSynchronize"); }

void CudaRuntime::destroyStream(void* stream) noexcept {
  if (stream) streamDestroy_(stream);
}

void CudaRuntime::synchronizeDevice() { check(deviceSynchronize_(), "cudaDeviceSynchronize"); }

}  // namespace hetccl::perf
