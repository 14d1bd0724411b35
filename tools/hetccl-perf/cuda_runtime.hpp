// The few CUDA runtime functions hetccl-perf needs for `--device cuda`, opened at run time with dlopen so
// that the tool links no CUDA and needs no CUDA headers (host-only builds and machines keep working).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace hetccl::perf {

/// libcudart, opened once per process. Every method throws std::runtime_error naming the CUDA call and
/// the runtime's error string when the call fails.
class CudaRuntime {
 public:
  /// Opens the CUDA runtime (libcudart.so, libcudart.so.13, libcudart.so.12, then the same names under
  /// /usr/local/cuda/lib64) and resolves its functions. Throws std::runtime_error listing every name
  /// tried and why it failed when none loads or a function is missing. The object lives until exit.
  static CudaRuntime& instance();

  /// Number of visible devices; throws when the runtime reports an error (e.g. no driver) or 0 devices.
  int deviceCount();
  /// Makes `device` current on the calling thread.
  void setDevice(int device);
  /// `bytes` of device memory (at least 1 byte is allocated); free with freeDevice.
  void* allocDevice(size_t bytes);
  /// Frees memory from allocDevice; null is ignored; errors are ignored (used in destructors).
  void freeDevice(void* ptr) noexcept;
  /// Synchronous copies (cudaMemcpy) host -> device and device -> host.
  void copyToDevice(void* deviceDst, const void* hostSrc, size_t bytes);
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes);
  /// A new stream (cudaStream_t as void*); destroy with destroyStream.
  void* createStream();
  /// Waits until everything queued on `stream` is done.
  void synchronizeStream(void* stream);
  /// Destroys a stream from createStream; null is ignored; errors are ignored.
  void destroyStream(void* stream) noexcept;
  /// Waits until the current device is idle.
  void synchronizeDevice();

  /// The path that was opened, e.g. "libcudart.so.13".
  const std::string& libraryName() const { return libraryName_; }

 private:
  CudaRuntime();
  /// Throws "<what> failed: <cudaGetErrorString(code)> (CUDA error <code>)" unless code is 0.
  void check(int code, const char* what) const;

  // cudaError_t is an enum (int sized); cudaStream_t is a pointer; cudaMemcpyKind is an enum.
  typedef int (*SetDeviceFn)(int);
  typedef int (*GetDeviceCountFn)(int*);
  typedef int (*MallocFn)(void**, size_t);
  typedef int (*FreeFn)(void*);
  typedef int (*MemcpyFn)(void*, const void*, size_t, int);
  typedef int (*StreamCreateFn)(void**);
  typedef int (*StreamFn)(void*);
  typedef int (*DeviceSynchronizeFn)();
  typedef const char* (*GetErrorStringFn)(int);

  std::string libraryName_;
  SetDeviceFn setDevice_ = nullptr;
  GetDeviceCountFn getDeviceCount_ = nullptr;
  MallocFn malloc_ = nullptr;
  FreeFn free_ = nullptr;
  MemcpyFn memcpy_ = nullptr;
  StreamCreateFn streamCreate_ = nullptr;
  StreamFn streamSynchronize_ = nullptr;
  StreamFn streamDestroy_ = nullptr;
  DeviceSynchronizeFn deviceSynchronize_ = nullptr;
  GetErrorStringFn getErrorString_ = nullptr;
};

/// Device memory owned by one object (freed on destruction).
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(CudaRuntime& cuda, size_t bytes) : cuda_(&cuda), ptr_(cuda.allocDevice(bytes)) {}
  ~DeviceMemory() {
    if (cuda_) cuda_->freeDevice(ptr_);
  }
  DeviceMemory(DeviceMemory&& other) noexcept : cuda_(other.cuda_), ptr_(other.ptr_) { other.cuda_ = nullptr; }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    std::swap(cuda_, other.cuda_);
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  unsigned char* data() const { return static_cast<unsigned char*>(ptr_); }

 private:
  CudaRuntime* cuda_ = nullptr;
  void* ptr_ = nullptr;
};

}  // namespace hetccl::perf
