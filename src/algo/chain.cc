// Pipelined chains: broadcast flows root -> v1 -> v2 -> ... (v = position relative to the root);
// reduce flows the other way, v(n-1) -> ... -> root. Chunk-major, so chunks stream down the chain.
#include "algo/patterns.hpp"

namespace hetccl::algo {

void chainBroadcast(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range) {
  const size_t n = members.size();
  if (n < 2) return;
  const size_t v = (positionOf(members, ctx.topo.rank) + n - rootPos) % n;
  const int prev = members[(v + n - 1 + rootPos) % n], next = members[(v + 1 + rootPos) % n];
  forEachChunk(range, ctx.chunkElems(), [&](Range c) {
    if (v > 0) ctx.builder.recv(prev, ctx.at(buf, c.begin), ctx.bytes(c.len));
    if (v + 1 < n) ctx.builder.send(next, ctx.at(buf, c.begin), ctx.bytes(c.len));
  });
}

void chainReduce(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range) {
  const size_t n = members.size();
  if (n < 2) return;
  const size_t v = (positionOf(members, ctx.topo.rank) + n - rootPos) % n;
  const int toward = members[(v + n - 1 + rootPos) % n], from = members[(v + 1 + rootPos) % n];
  forEachChunk(range, ctx.chunkElems(), [&](Range c) {
    if (v + 1 < n) ctx.builder.recvReduce(from, ctx.at(buf, c.begin), ctx.bytes(c.len), ctx.reduction);
    if (v > 0) ctx.builder.send(toward, ctx.at(buf, c.begin), ctx.bytes(c.len));
  });
}

}  // namespace hetccl::algo
