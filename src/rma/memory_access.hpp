// How the RMA service touches memory: kind detection at registration, copies into and out of regions
// (host: memcpy; device: the GPU plugin's synchronous copies, staged through pinned host memory), and
// the staging buffers of packed pieces and device regions.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
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

  /// A host buffer of `bytes` (pinned where the rank has a GPU), from a pool of free ones; give it back
  /// with recycle(). Buffers are of size `bytes` rounded up to the pool's granule.
  struct Buffer {
    unsigned char* data = nullptr;
    size_t bytes = 0;
  };
  Buffer staging(size_t bytes);
  void recycle(Buffer b) noexcept;
  /// "staged through pinned host memory" / "" for the description of paths.
  bool hasGpu() const { return gpu_ != nullptr; }

 private:
  void freeBuffer(Buffer b) noexcept;
  device::GpuRuntime* gpu_;
  MemKind gpuKind_;
  int device_;
  std::mutex mu_;
  std::vector<Buffer> free_;
};

}  // namespace hetccl::rma
