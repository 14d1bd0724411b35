// Happens-before edges through memory mapped more than once in one process, told to ThreadSanitizer.
//
// Two communicators of one process (the unit tests' ranks, two domains sharing a process) map one shm
// segment at two different addresses. The release store of a ring's `head` through one mapping and the
// acquire load through the other synchronise in hardware, but TSan tracks atomics by virtual address and
// sees two unrelated variables: data handed over through the ring (an RMA target's buffer written by its
// progress thread, then acknowledged through another ring) is reported as a race. Each ring names its
// edge by a key both mappings know (the segment's name); release() before the publishing store and
// acquire() after the load that saw it give TSan the edge the hardware already has. Without TSan both
// are empty inline functions: nothing is added to the product build.
#pragma once

#include <cstddef>
#include <string_view>

#if defined(__SANITIZE_THREAD__)
#define HETCCL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HETCCL_TSAN 1
#endif
#endif

#ifdef HETCCL_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace hetccl::transport::shm {

class CrossMappingSync {
 public:
  /// key: the same string in every process and mapping that shares the memory (e.g. the segment name).
  explicit CrossMappingSync(std::string_view key);

  /// Call just before the store that publishes data to the other mapping.
  void release() const {
#ifdef HETCCL_TSAN
    __tsan_release(addr_);
#endif
  }
  /// Call just after a load that saw such a store.
  void acquire() const {
#ifdef HETCCL_TSAN
    __tsan_acquire(addr_);
#endif
  }

 private:
  void* addr_ = nullptr;  ///< the key's byte in a process-wide table (TSan's synchronisation object)
};

}  // namespace hetccl::transport::shm
