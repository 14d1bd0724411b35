// Binomial trees over virtual positions v = (position - rootPos) mod n. Chunks are listed chunk-major so
// a parent's receives of consecutive chunks from one child queue up back to back on that connection.
#include <algorithm>

#include "algo/patterns.hpp"

namespace hetccl::algo {
namespace {

int memberAt(const std::vector<int>& members, size_t rootPos, size_t v) {
  return members[(v + rootPos) % members.size()];
}

}  // namespace

void treeReduce(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range) {
  const size_t n = members.size();
  if (n < 2) return;
  const size_t v = (positionOf(members, ctx.topo.rank) + n - rootPos) % n;
  forEachChunk(range, ctx.chunkElems(), [&](Range c) {
    const Location at = ctx.at(buf, c.begin);
    // Children v+1, v+2, v+4, ... (below v's lowest set bit) reduce into v, in that fixed order; then v
    // sends the subtree's sum to its parent v - lowbit(v).
    for (size_t mask = 1; mask < n; mask <<= 1) {
      if (v & mask) {
        ctx.builder.send(memberAt(members, rootPos, v - mask), at, ctx.bytes(c.len));
        break;
      }
      if (v + mask < n) ctx.builder.recvReduce(memberAt(members, rootPos, v + mask), at, ctx.bytes(c.len), ctx.reduction);
    }
  });
}

void treeBroadcast(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range) {
  const size_t n = members.size();
  if (n < 2) return;
  const size_t v = (positionOf(members, ctx.topo.rank) + n - rootPos) % n;
  size_t top = 1;  // first power of two >= n
  while (top < n) top <<= 1;
  forEachChunk(range, ctx.chunkElems(), [&](Range c) {
    const Location at = ctx.at(buf, c.begin);
    size_t mask = 1;
    for (; mask < n; mask <<= 1) {  // receive from the parent v - lowbit(v)
      if (v & mask) {
        ctx.builder.recv(memberAt(members, rootPos, v - mask), at, ctx.bytes(c.len));
        break;
      }
    }
    if (v == 0) mask = top;
    for (mask >>= 1; mask > 0; mask >>= 1)  // then forward to children v + 2^j, farthest first
      if (v + mask < n) ctx.builder.send(memberAt(members, rootPos, v + mask), at, ctx.bytes(c.len));
  });
}

}  // namespace hetccl::algo
