#include "rma/memory_access.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace hetccl::rma {
namespace {
constexpr size_t kGranule = 64 * 1024;
constexpr size_t kMaxPooled = 16;
}  // namespace

MemoryAccess::MemoryAccess(device::GpuRuntime* gpu, MemKind gpuKind, int device)
    : gpu_(gpu), gpuKind_(gpuKind), device_(device) {}

MemoryAccess::~MemoryAccess() {
  if (copyStream_) gpu_->destroyStream(copyStream_);
  for (Buffer b : free_) freeBuffer(b);
}

MemKind MemoryAccess::kindOf(const void* p) const {
  if (!gpu_) return MemKind::Host;
  const device::GpuRuntime::PointerInfo info = gpu_->query(p);
  if (info.memType != HETCCL_GPU_MEM_DEVICE && info.memType != HETCCL_GPU_MEM_MANAGED) return MemKind::Host;
  if (info.device != device_)
    throw InvalidArgument(concat("the buffer is memory of device ", info.device, "; this rank is bound to device ", device_));
  return gpuKind_;
}

void MemoryAccess::bindThread() const {
  if (gpu_ && device_ >= 0) gpu_->setCurrentDevice(device_);
}

void MemoryAccess::toMemory(MemKind kind, void* dst, const void* src, size_t n) const {
  if (n == 0) return;
  const Copy c{dst, src, n};
  copyAll(kind, std::span(&c, 1));
}

void MemoryAccess::fromMemory(MemKind kind, void* dst, const void* src, size_t n) const {
  if (n == 0) return;
  const Copy c{dst, src, n};
  copyAll(kind, std::span(&c, 1));
}

namespace {

/// Whether two of the copies write overlapping bytes (then they must run in order, not as one batch).
bool destinationsOverlap(std::span<const MemoryAccess::Copy> copies) {
  std::vector<std::pair<uintptr_t, uintptr_t>> d;
  d.reserve(copies.size());
  for (const MemoryAccess::Copy& c : copies)
    if (c.n) d.emplace_back(reinterpret_cast<uintptr_t>(c.dst), reinterpret_cast<uintptr_t>(c.dst) + c.n);
  std::sort(d.begin(), d.end());
  for (size_t i = 1; i < d.size(); ++i)
    if (d[i].first < d[i - 1].second) return true;
  return false;
}

}  // namespace

void MemoryAccess::copyAll(MemKind kind, std::span<const Copy> copies) const {
  if (!isDevice(kind) || !gpu_) {
    copyAllAsync(kind, copies, nullptr);
    return;
  }
  std::lock_guard<std::mutex> lock(streamMu_);
  if (!copyStream_) copyStream_ = gpu_->createStream();  // non-blocking with respect to the null stream
  copyAllAsync(kind, copies, copyStream_);
  gpu_->synchronize(copyStream_);
}

void MemoryAccess::copyAllAsync(MemKind kind, std::span<const Copy> copies, void* stream) const {
  if (!isDevice(kind) || !gpu_) {
    for (const Copy& c : copies)
      if (c.n) std::memcpy(c.dst, c.src, c.n);
    return;
  }
  if (copies.size() > 1 && !destinationsOverlap(copies)) {  // one batch: its copies run in any order
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    std::vector<size_t> sizes;
    for (const Copy& c : copies)
      if (c.n) {
        dsts.push_back(c.dst);
        srcs.push_back(c.src);
        sizes.push_back(c.n);
      }
    gpu_->copyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(), stream);
  } else {  // in order: a later copy to the same bytes wins
    for (const Copy& c : copies)
      if (c.n) gpu_->copyAsync(c.dst, c.src, c.n, stream);
  }
}

MemoryAccess::Buffer MemoryAccess::staging(size_t bytes) {
  bytes = (bytes + kGranule - 1) / kGranule * kGranule;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < free_.size(); ++i)
      if (free_[i].bytes >= bytes) {
        Buffer b = free_[i];
        free_.erase(free_.begin() + static_cast<long>(i));
        return b;
      }
  }
  Buffer b{nullptr, bytes};
  b.data = static_cast<unsigned char*>(gpu_ ? gpu_->allocPinned(bytes) : std::malloc(bytes));
  if (!b.data) throw SystemError(concat("cannot allocate ", bytes, " bytes of RMA staging memory"));
  return b;
}

void MemoryAccess::recycle(Buffer b) noexcept {
  if (!b.data) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hold_ || free_.size() < kMaxPooled) {
      free_.push_back(b);
      return;
    }
  }
  freeBuffer(b);
}

void MemoryAccess::holdFrees(bool hold) {
  std::vector<Buffer> excess;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hold_ == hold) return;
    hold_ = hold;
    while (!hold_ && free_.size() > kMaxPooled) {
      excess.push_back(free_.back());
      free_.pop_back();
    }
  }
  for (Buffer b : excess) freeBuffer(b);
}

void MemoryAccess::freeBuffer(Buffer b) noexcept {
  if (gpu_) gpu_->freePinned(b.data);
  else std::free(b.data);
}

}  // namespace hetccl::rma
