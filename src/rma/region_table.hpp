// The registrations of one rank that peers may access: slot, generation, kind and bounds. A peer names
// a region by (slot, generation) from its descriptor; a slot is reused only with a new generation, so a
// descriptor of a deregistered region is always recognised as stale, never aliased to a new one.
// The progress thread holds an access (acquire/release) while it reads or writes a region; deregister
// waits for accesses in progress, so a region's memory is never touched after deregister returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "core/deadline.hpp"
#include "rma/mem_kind.hpp"
#include "rma/wire.hpp"

namespace hetccl::rma {

struct RegionRef {
  uint32_t slot = 0;
  uint32_t generation = 0;
};

/// What an access found: the region's memory (status Ok), or why it was refused.
struct Access {
  Status status = Status::Ok;
  unsigned char* base = nullptr;
  MemKind kind = MemKind::Host;
  uint64_t regionBytes = 0;  ///< the region's size (also reported with OutOfBounds)
  uint64_t badOffset = 0, badBytes = 0;  ///< the first range outside the region (OutOfBounds)
};

class RegionTable {
 public:
  RegionRef add(void* base, uint64_t bytes, MemKind kind);
  /// Makes the region stale at once, then waits until no access to it is in progress (or `deadline`:
  /// TimeoutError). Unknown or already removed: nothing.
  void remove(RegionRef ref, Deadline deadline);
  /// Checks (slot, generation) and that every range lies within the region; on Ok an access is held
  /// until release(ref).
  Access acquire(RegionRef ref, std::span<const WireRange> ranges);
  void release(RegionRef ref);

 private:
  struct Slot {
    unsigned char* base = nullptr;
    uint64_t bytes = 0;
    MemKind kind = MemKind::Host;
    uint32_t generation = 0;
    bool live = false;
    int accesses = 0;
  };
  std::mutex mu_;
  std::condition_variable idle_;
  std::vector<Slot> slots_;
};

}  // namespace hetccl::rma
