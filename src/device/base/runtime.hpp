// Device runtime interface: the memory services hetccl needs from one kind of memory (host, CUDA, HIP),
// shaped like UCC's memory components (alloc / free / copy / fill / "whose pointer is this?").
//
// Implementations: device::GpuRuntime (src/device/gpu_runtime.hpp) over a CUDA or HIP plugin that the
// core opens with dlopen at run time, so it never links a vendor runtime; the tests' host runtime and
// registry (tests/support/host_runtime.hpp, runtime_registry.hpp). Streams, events, async copies and device reduction kernels are later additions to this
// interface (as separate capabilities, queried before use); nothing here is asynchronous.
//
// Copies between two *different* device kinds (CUDA <-> HIP) are not a runtime's job: the engine stages
// them through host memory with one runtime on each side.
#pragma once

#include <cstddef>

namespace hetccl::device {

/// Where a buffer lives. Values are stable (they may appear in logs and rank descriptors).
enum class MemoryKind : int {
  Host = 0,  ///< ordinary (pageable or pinned) host memory
  Cuda = 1,  ///< memory of a CUDA device
  Hip = 2,   ///< memory of a HIP (ROCm) device
};
inline constexpr int kNumMemoryKinds = 3;

/// "host", "cuda", "hip"; "unknown" outside the enum.
const char* memoryKindName(MemoryKind kind) noexcept;

/// Memory services of one device runtime. Implementations are thread-safe: every method may be called
/// from any thread at any time.
class Runtime {
 public:
  virtual ~Runtime() = default;

  /// The kind of memory this runtime allocates and recognises.
  virtual MemoryKind kind() const noexcept = 0;
  /// Short name for logs and hetccl-info, e.g. "host", "cuda 12.4".
  virtual const char* name() const noexcept = 0;

  /// Allocates `bytes` (> 0; 0 throws InvalidArgument) of this runtime's memory, aligned to at least 64 bytes, on the device
  /// current to the calling thread. Throws SystemError (host) or the runtime's error, naming the size,
  /// when it cannot. Never returns nullptr.
  virtual void* alloc(size_t bytes) = 0;
  /// Frees memory returned by alloc() of this runtime. nullptr is ignored.
  virtual void free(void* ptr) noexcept = 0;

  /// Copies `bytes` from src to dst; each side is either this runtime's memory or host memory, and the
  /// ranges do not overlap. Complete when it returns. Throws on a runtime failure.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  /// Sets `bytes` bytes at dst (this runtime's memory) to `byteValue`. Complete when it returns.
  virtual void fill(void* dst, int byteValue, size_t bytes) = 0;

  /// True when `ptr` points into memory of this runtime (the host runtime answers false: host is what
  /// a pointer is when no device runtime claims it). Must be cheap and must not throw.
  virtual bool owns(const void* ptr) const noexcept = 0;
};

}  // namespace hetccl::device
