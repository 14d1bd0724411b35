// Recursive doubling all-reduce. With n not a power of two, the first 2*extra positions pair up: the even
// one hands its data to the odd one, sits out the rounds, and gets the result back at the end.
// In every exchange both partners compute (lower position's value) op (higher position's value), in
// that operand order, so both hold identical bits afterwards.
#include "algo/patterns.hpp"

namespace hetccl::algo {
namespace {

/// mine = lower op upper, where the partner's value has just arrived in `theirs` (scratch).
void combine(const OpContext& ctx, bool iAmLower, Location mine, Location theirs, size_t len) {
  if (iAmLower) {
    ctx.builder.reduce(mine, theirs, ctx.bytes(len), ctx.reduction);
  } else {
    ctx.builder.reduce(theirs, mine, ctx.bytes(len), ctx.reduction);
    ctx.builder.copy(mine, theirs, ctx.bytes(len));
  }
}

}  // namespace

void recursiveDoublingAllReduce(const OpContext& ctx, const std::vector<int>& members, Location buf, Range range) {
  const size_t n = members.size();
  if (n < 2 || range.len == 0) return;
  size_t pow2 = 1;
  while (pow2 * 2 <= n) pow2 *= 2;
  const size_t extra = n - pow2;
  const size_t pos = positionOf(members, ctx.topo.rank);
  const bool folded = pos < 2 * extra;  // pairs (0,1), (2,3), ... of the first 2*extra positions
  const bool sitsOut = folded && pos % 2 == 0;
  const size_t newPos = folded ? pos / 2 : pos - extra;
  auto realPos = [&](size_t np) { return np < extra ? np * 2 + 1 : np + extra; };
  const Location scratch = ctx.builder.allocScratch(ctx.bytes(range.len));

  forEachChunk(range, ctx.chunkElems(), [&](Range c) {
    const Location mine = ctx.at(buf, c.begin);
    const Location theirs = ctx.at(scratch, c.begin - range.begin);
    const uint64_t bytes = ctx.bytes(c.len);
    if (folded) {
      if (sitsOut) {
        ctx.builder.send(members[pos + 1], mine, bytes);
        ctx.builder.recv(members[pos + 1], mine, bytes);
        return;
      }
      ctx.builder.recv(members[pos - 1], theirs, bytes);
      combine(ctx, false, mine, theirs, c.len);
    }
    for (size_t mask = 1; mask < pow2; mask <<= 1) {
      const size_t partnerNew = newPos ^ mask;
      const int partner = members[realPos(partnerNew)];
      ctx.builder.send(partner, mine, bytes);
      ctx.builder.recv(partner, theirs, bytes);
      combine(ctx, newPos < partnerNew, mine, theirs, c.len);
    }
    if (folded) ctx.builder.send(members[pos - 1], mine, bytes);
  });
}

}  // namespace hetccl::algo
