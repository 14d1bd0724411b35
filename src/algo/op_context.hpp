// What every algorithm gets: the builder to emit steps into, the topology, the tuning and the operation,
// plus small helpers shared by the algorithms (ranges, chunking, loading a rank's contribution).
#pragma once

#include <algorithm>

#include <cstddef>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/schedule_builder.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"

namespace hetccl::algo {

/// A range of elements [begin, begin + len).
struct Range {
  size_t begin = 0;
  size_t len = 0;
};

struct OpContext {
  ScheduleBuilder& builder;
  const Topology& topo;
  const Tuning& tuning;
  const CollOp& op;
  size_t elemSize = 1;
  uint32_t reduction = 0;  ///< this op's Reduction (reducing collectives)

  /// Location of element `elem` of `base`.
  Location at(Location base, size_t elem) const { return base + elem * elemSize; }
  uint64_t bytes(size_t elems) const { return elems * elemSize; }
  /// Pipeline chunk: HETCCL_CHUNK_BYTES for large operations; mid-size ones (below Tuning::midChunks
  /// chunks) use smaller chunks, down to Tuning::minChunkBytes, so that they still pipeline.
  size_t chunkElems() const {
    const size_t total = op.count * elemSize;
    const size_t pieces = std::max<size_t>(1, tuning.midChunks);
    const size_t bytes = std::min(std::max<size_t>(total / pieces, tuning.minChunkBytes), tuning.chunkBytes);
    return std::max<size_t>(1, bytes / elemSize);
  }

  /// Puts this rank's contribution to a reduction at dst: dst = src scaled by the PreMulSum scalar,
  /// or a plain copy for the other operators. Every contribution is scaled exactly once, here.
  void loadContribution(Location dst, Location src, size_t count) const;
  /// dst = src in pipeline chunks (dropped when dst == src).
  void copyChunked(Location dst, Location src, size_t count) const;
  /// Avg only: dst /= number of ranks (call once, after the full sum, before distributing).
  void finishAvg(Location dst, size_t count) const;
};

/// Splits `count` into `parts` consecutive ranges whose lengths differ by at most one.
std::vector<Range> splitEven(size_t count, size_t parts);

/// Calls fn(Range) for consecutive chunks of at most `chunk` elements covering `r` (nothing when empty).
template <typename Fn>
void forEachChunk(Range r, size_t chunk, Fn fn) {
  for (size_t off = 0; off < r.len; off += chunk) fn(Range{r.begin + off, r.len - off < chunk ? r.len - off : chunk});
}

/// Number of chunks forEachChunk visits.
inline size_t chunkCount(size_t len, size_t chunk) { return (len + chunk - 1) / chunk; }

/// Position of `rank` in `members`; throws InternalError when absent.
size_t positionOf(const std::vector<int>& members, int rank);

}  // namespace hetccl::algo
