// Scratch memory the engine reuses across calls of one communicator: growing a buffer once beats
// allocating (and page-faulting) tens of megabytes on every collective. Not thread-safe: one arena
// serves one communicator, which runs one group at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace hetccl::engine {

class ScratchArena {
 public:
  /// At least `bytes` bytes, 64-byte aligned, contents unspecified. Valid until the next call.
  void* get(size_t bytes) {
    if (bytes > capacity_) {
      const size_t words = (bytes + 63) / 64 * 8;
      buffer_ = std::make_unique_for_overwrite<uint64_t[]>(words + 8);  // no zero-fill
      capacity_ = bytes;
    }
    auto p = reinterpret_cast<uintptr_t>(buffer_.get());
    return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
  }
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<uint64_t[]> buffer_;
  size_t capacity_ = 0;
};

}  // namespace hetccl::engine
