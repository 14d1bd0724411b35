#include "rma/stream_flags.hpp"

#include <cstring>

namespace hetccl::rma {

StreamFlags::~StreamFlags() {
  if (leak_) return;
  for (void* c : chunks_) gpu_->freePinned(c);
}

uint64_t* StreamFlags::acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    void* chunk = gpu_->allocPinned(kSlotBytes * kSlotsPerChunk);  // throws
    std::memset(chunk, 0, kSlotBytes * kSlotsPerChunk);
    chunks_.push_back(chunk);
    for (size_t i = kSlotsPerChunk; i-- > 0;)
      free_.push_back(reinterpret_cast<uint64_t*>(static_cast<char*>(chunk) + i * kSlotBytes));
  }
  uint64_t* slot = free_.back();
  free_.pop_back();
  for (size_t w = 0; w < kSlotBytes / 8; ++w) __atomic_store_n(slot + w, 0, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  return slot;
}

void StreamFlags::recycle(uint64_t* slot) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(slot);
}

}  // namespace hetccl::rma
