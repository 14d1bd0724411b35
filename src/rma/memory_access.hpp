// How the RMA service touches memory: kind detection at registration, copies into and out of regions
// (host: memcpy; device: copies staged through pinned host memory, complete on return), and the staging
// buffers of packed pieces and device regions.
//
// Device copies run on a private stream that is non-blocking with respect to the null stream (a copy and
// a synchronisation on the legacy default stream would wait for every blocking stream of the device --
// also a user stream held by a stream-ordered transfer until this very copy is done: a deadlock). While
// stream-ordered transfers are in flight (holdFrees), staging buffers are pooled, never freed: freeing
// pinned memory synchronises the device, which waits for those held streams.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "device/gpu_runtime.hpp"
#include "rma/mem_kind.hpp"

namespace hetccl::rma {

class MemoryAccess {
 public:
  /// `gpu`: this rank's GPU runtime (nullptr on a CPU rank); `device`: its ordinal.
  MemoryAccess(device::GpuRuntime* gpu, MemKind gpuKind, int device);
  ~MemoryAccess();

  /// The kind of [p, p + bytes): Host, or this rank's GPU kind for device or managed memory of its device.
  /// Throws InvalidArgument for device memory of another device.
  MemKind kindOf(const void* p) const;
  /// Makes the rank's device current on the calling thread (the progress thread, once).
  void bindThread() const;
  /// dst (memory of kind `kind`) = src (host memory), complete on return.
  void toMemory(MemKind kind, void* dst, const void* src, size_t n) const;
  /// dst (host memory) = src (memory of kind `kind`), complete on return.
  void fromMemory(MemKind kind, void* dst, const void* src, size_t n) const;
  /// One copy between memory of some kind and host memory (either direction).
  struct Copy {
    void* dst;
    const void* src;
    size_t n;
  };
  /// Runs `copies`, each between memory of kind `kind` and host memory, complete on return: device copies
  /// are queued together on the copy stream -- as one batch (GpuRuntime::copyBatchAsync) when no two
  /// destinations overlap, else one by one in order -- and synchronised once (a chunk of many small ranges
  /// costs one synchronisation, not one per range).
  void copyAll(MemKind kind, std::span<const Copy> copies) const;
  /// copyAll's device copies queued on `stream` (the caller's; the caller synchronises, e.g. with an
  /// event); host copies (kind Host, or no GPU) are done on return.
  void copyAllAsync(MemKind kind, std::span<const Copy> copies, void* stream) const;

  /// A host buffer of `bytes` (pinned where the rank has a GPU), from a pool of free ones; give it back
  /// with recycle(). Buffers are of size `bytes` rounded up to the pool's granule.
  struct Buffer {
    unsigned char* data = nullptr;
    size_t bytes = 0;
  };
  Buffer staging(size_t bytes);
  void recycle(Buffer b) noexcept;
  /// While true, recycle() keeps every buffer (see the top of this file); false trims the pool again.
  void holdFrees(bool hold);
  /// "staged through pinned host memory" / "" for the description of paths.
  bool hasGpu() const { return gpu_ != nullptr; }
  /// This rank's GPU runtime, or nullptr on a CPU rank.
  device::GpuRuntime* gpu() const { return gpu_; }
  /// The kind of this rank's device memory (Host on a CPU rank).
  MemKind gpuKind() const { return gpuKind_; }

 private:
  void freeBuffer(Buffer b) noexcept;
  device::GpuRuntime* gpu_;
  MemKind gpuKind_;
  int device_;
  std::mutex mu_;
  std::vector<Buffer> free_;
  bool hold_ = false;                  // guarded by mu_
  mutable std::mutex streamMu_;
  mutable void* copyStream_ = nullptr;  // created at the first device copy
};

}  // namespace hetccl::rma
