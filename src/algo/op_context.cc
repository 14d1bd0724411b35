#include "algo/op_context.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hetccl::algo {

void OpContext::loadContribution(Location dst, Location src, size_t count) const {
  // Chunked, so the first sends of a pipeline wait only for their own chunk.
  forEachChunk(Range{0, count}, chunkElems(), [&](Range c) {
    if (op.op.kind == RedOpKind::PreMulSum) {
      builder.scale(at(dst, c.begin), at(src, c.begin), bytes(c.len), reduction);
    } else {
      builder.copy(at(dst, c.begin), at(src, c.begin), bytes(c.len));
    }
  });
}

void OpContext::copyChunked(Location dst, Location src, size_t count) const {
  forEachChunk(Range{0, count}, chunkElems(),
               [&](Range c) { builder.copy(at(dst, c.begin), at(src, c.begin), bytes(c.len)); });
}

void OpContext::finishAvg(Location dst, size_t count) const {
  if (op.op.kind == RedOpKind::Avg) builder.divide(dst, bytes(count), reduction);
}

std::vector<Range> splitEven(size_t count, size_t parts) {
  std::vector<Range> out(parts);
  size_t begin = 0;
  for (size_t i = 0; i < parts; ++i) {
    size_t len = count / parts + (i < count % parts ? 1 : 0);
    out[i] = Range{begin, len};
    begin += len;
  }
  return out;
}

size_t positionOf(const std::vector<int>& members, int rank) {
  auto it = std::find(members.begin(), members.end(), rank);
  if (it == members.end()) throw InternalError(concat("algo: rank ", rank, " is not in the member list"));
  return static_cast<size_t>(it - members.begin());
}

}  // namespace hetccl::algo
