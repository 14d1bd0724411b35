// Host staging of device buffers: which device ranges a group of operations reads and writes, merged
// into regions, each mapped to a place in a pinned host buffer. Pure arithmetic (no device calls), so it
// is unit-tested on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algo/coll_op.hpp"

namespace hetccl {

struct StagingRegion {
  uintptr_t device = 0;      ///< start of the device range
  size_t bytes = 0;
  size_t hostOffset = 0;     ///< where it lives in the staging buffer
  bool copyIn = false;       ///< device -> host before the collective (it is read, or not fully written)
  bool copyOut = false;      ///< host -> device after it (something in it is written)
  uintptr_t source = 0;      ///< if set, copied in from here instead of `device`: an out-of-place input
                             ///< staged where its output goes (staged_pieces.hpp), same size
  /// Where the copy into staging reads.
  const void* copyInFrom() const { return reinterpret_cast<const void*>(source ? source : device); }
};

struct StagingPlan {
  std::vector<StagingRegion> regions;
  size_t hostBytes = 0;  ///< staging bytes needed

  /// Plans the group for this rank (`rank` of `nranks`: roots and peers decide what is read/written).
  static StagingPlan build(std::span<const algo::CollOp> ops, int rank, int nranks);
  /// The operations with every device pointer replaced by its place in `hostBase`.
  std::vector<algo::CollOp> translate(std::span<const algo::CollOp> ops, void* hostBase) const;

 private:
  const void* map(const void* device, void* hostBase) const;
};

}  // namespace hetccl
