// The few GPU runtime functions hetccl-perf needs for device buffers (`--device cuda|hip|gpu`), opened at
// run time with dlopen so that the tool links no vendor runtime and needs no vendor headers (host-only
// builds and machines keep working). CUDA's and HIP's runtimes have the same signatures for these
// functions under another prefix (cudaMalloc / hipMalloc, ...), so one class serves both, built from a
// small per-vendor spec.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hetccl::perf {

enum class GpuVendor { Cuda, Hip };

/// What differs between the vendors' runtimes.
struct GpuRuntimeSpec {
  std::string device;        ///< "cuda" / "hip": the --device value and HETCCL_DEVICE value of the vendor
  std::string displayName;   ///< "CUDA" / "HIP" (messages)
  std::string symbolPrefix;  ///< "cuda" / "hip": the functions are <prefix>SetDevice, <prefix>Malloc, ...
  std::vector<std::string> libraries;  ///< dlopen'ed in this order; the first that opens is used
  std::string installHint;   ///< what to do when none opens
  std::string plugin;        ///< hetccl's plugin of the vendor, e.g. "libhetccl-cuda.so" (messages)
};

/// The spec of a vendor: CUDA: libcudart.so, .so.13, .so.12, then the same under /usr/local/cuda/lib64;
/// HIP: libamdhip64.so.7, .so.6, .so.5, libamdhip64.so, then the same under /opt/rocm/lib.
const GpuRuntimeSpec& gpuRuntimeSpec(GpuVendor vendor);

/// One vendor's GPU runtime, opened once per process (instance) or from any spec (tests). Every method
/// throws std::runtime_error "--device <device>: <call> failed: <error string> (<Vendor> error <code>,
/// <library>)" when the call fails.
class GpuRuntimeApi {
 public:
  /// The runtime of `vendor`, opened on first use and kept until exit. A failed opening throws (see the
  /// constructor) and is retried by the next call.
  static GpuRuntimeApi& instance(GpuVendor vendor);

  /// Opens the first of spec.libraries that loads and resolves its functions. Throws std::runtime_error
  /// listing every name tried and why it failed when none loads, or naming a missing function. The
  /// library is never closed.
  explicit GpuRuntimeApi(GpuRuntimeSpec spec);
  GpuRuntimeApi(const GpuRuntimeApi&) = delete;
  GpuRuntimeApi& operator=(const GpuRuntimeApi&) = delete;

  /// Number of visible devices; throws when the runtime reports an error (e.g. no driver) or 0 devices.
  int deviceCount();
  /// Makes `device` current on the calling thread.
  void setDevice(int device);
  /// `bytes` of device memory (at least 1 byte is allocated); free with freeDevice.
  void* allocDevice(size_t bytes);
  /// Frees memory from allocDevice; null is ignored; errors are ignored (used in destructors).
  void freeDevice(void* ptr) noexcept;
  /// Synchronous copies (<prefix>Memcpy) host -> device and device -> host.
  void copyToDevice(void* deviceDst, const void* hostSrc, size_t bytes);
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes);
  /// A new stream (cudaStream_t / hipStream_t as void*); destroy with destroyStream.
  void* createStream();
  /// Waits until everything queued on `stream` is done.
  void synchronizeStream(void* stream);
  /// Destroys a stream from createStream; null is ignored; errors are ignored.
  void destroyStream(void* stream) noexcept;
  /// Waits until the current device is idle.
  void synchronizeDevice();

  const GpuRuntimeSpec& spec() const { return spec_; }
  /// The path that was opened, e.g. "libcudart.so.13" or "libamdhip64.so.6".
  const std::string& libraryName() const { return libraryName_; }

 private:
  /// Throws "<what> failed: <GetErrorString(code)> (<Vendor> error <code>, <library>)" unless code is 0.
  void check(int code, const std::string& what) const;
  /// "<prefix><name>", e.g. "hipMalloc".
  std::string fn(const char* name) const { return spec_.symbolPrefix + name; }

  // cudaError_t / hipError_t are enums (int sized); streams are pointers; the memcpy kinds are enums
  // with the same values (HostToDevice 1, DeviceToHost 2).
  typedef int (*SetDeviceFn)(int);
  typedef int (*GetDeviceCountFn)(int*);
  typedef int (*MallocFn)(void**, size_t);
  typedef int (*FreeFn)(void*);
  typedef int (*MemcpyFn)(void*, const void*, size_t, int);
  typedef int (*StreamCreateFn)(void**);
  typedef int (*StreamFn)(void*);
  typedef int (*DeviceSynchronizeFn)();
  typedef const char* (*GetErrorStringFn)(int);

  GpuRuntimeSpec spec_;
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

/// The GPU vendor of `-G` / `--device gpu`, and why.
struct GpuChoice {
  GpuVendor vendor = GpuVendor::Cuda;
  std::string reason;  ///< e.g. "HETCCL_DEVICE=hip" or "HETCCL_DEVICE=auto: the CUDA runtime sees 2 device(s)"
};

/// `-G` / `--device gpu`: the GPU of the rank as hetccl chooses it from HETCCL_DEVICE (`hetcclDevice`,
/// empty = auto): cuda or hip: that vendor (its runtime is not probed here); auto: CUDA when
/// `unusable(Cuda)` is empty (its runtime opens and sees a device), else HIP when `unusable(Hip)` is.
/// `unusable(vendor)` returns why the vendor's runtime cannot be used ("" when it can). Throws
/// std::runtime_error for host (host ranks read no device memory), for auto when neither vendor is usable
/// (naming both reasons) and for another value.
GpuChoice chooseGpuVendor(const std::string& hetcclDevice, const std::function<std::string(GpuVendor)>& unusable);
/// The real probe for chooseGpuVendor: "" when GpuRuntimeApi::instance(vendor) opens and sees a device,
/// else the error.
std::string gpuRuntimeUnusableReason(GpuVendor vendor);

/// Device memory owned by one object (freed on destruction).
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(GpuRuntimeApi& gpu, size_t bytes) : gpu_(&gpu), ptr_(gpu.allocDevice(bytes)) {}
  ~DeviceMemory() {
    if (gpu_) gpu_->freeDevice(ptr_);
  }
  DeviceMemory(DeviceMemory&& other) noexcept : gpu_(other.gpu_), ptr_(other.ptr_) { other.gpu_ = nullptr; }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    std::swap(gpu_, other.gpu_);
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  unsigned char* data() const { return static_cast<unsigned char*>(ptr_); }

 private:
  GpuRuntimeApi* gpu_ = nullptr;
  void* ptr_ = nullptr;
};

}  // namespace hetccl::perf
