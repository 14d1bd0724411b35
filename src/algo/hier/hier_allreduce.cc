// Hierarchical all-reduce across domains. recvbuff already holds this rank's contribution.
//  1. Each domain reduce-scatters (ring) its ranks' data: member i of domain d owns segment seg_d[i].
//  2. Pieces are the intervals between the union of all domains' segment boundaries; each piece has
//     exactly one owner per domain. The owners exchange their partial sums of the piece (all-to-all among
//     them) and each computes ((p_0 op p_1) op p_2) ... in domain order, so all owners get the same bits.
//     Different pieces have different owners, so every rank's cross-domain links work in parallel.
//  3. Avg divides each piece once, at its owners, after the full sum.
//  4. Each domain all-gathers (ring) the finished segments.
#include <set>

#include "algo/collectives.hpp"
#include "algo/patterns.hpp"

namespace hetccl::algo {

void planHierAllReduce(const OpContext& ctx) {
  const size_t count = ctx.op.count;
  const Topology& topo = ctx.topo;
  const int numDomains = topo.numDomains(), myDomain = topo.domainOf[topo.rank];
  const Location buf = Location::user(ctx.op.recvbuff);

  std::vector<std::vector<int>> members(numDomains);
  std::vector<std::vector<Range>> segments(numDomains);
  std::set<size_t> bounds{count};
  for (int d = 0; d < numDomains; ++d) {
    members[d] = topo.membersOf(d);
    segments[d] = splitEven(count, members[d].size());
    for (const Range& r : segments[d]) bounds.insert(r.begin);
  }
  const std::vector<int>& mine = members[myDomain];
  const Range own = segments[myDomain][positionOf(mine, topo.rank)];

  ringReduceScatter(ctx, mine, buf, segments[myDomain]);

  // Owner, in domain d, of the piece starting at element x.
  auto ownerOf = [&](int d, size_t x) {
    for (size_t i = 0; i < segments[d].size(); ++i)
      if (x >= segments[d][i].begin && x < segments[d][i].begin + segments[d][i].len) return members[d][i];
    return -1;
  };
  // Slot e holds domain e's partial of my segment.
  const Location slots = numDomains > 1 ? ctx.builder.allocScratch(ctx.bytes(own.len) * numDomains) : Location{};
  auto slot = [&](int e, size_t elem) { return ctx.at(slots, e * own.len + (elem - own.begin)); };

  for (auto it = bounds.begin(); std::next(it) != bounds.end(); ++it) {
    const Range piece{*it, *std::next(it) - *it};
    if (piece.len == 0 || piece.begin < own.begin || piece.begin >= own.begin + own.len) continue;  // not mine
    std::vector<int> owners(numDomains);
    for (int d = 0; d < numDomains; ++d) owners[d] = ownerOf(d, piece.begin);
    forEachChunk(piece, ctx.chunkElems(), [&](Range c) {
      const Location partial = ctx.at(buf, c.begin);
      const uint64_t bytes = ctx.bytes(c.len);
      for (int e = 0; e < numDomains; ++e)
        if (e != myDomain) ctx.builder.send(owners[e], partial, bytes);
      for (int e = 0; e < numDomains; ++e)
        if (e != myDomain) ctx.builder.recv(owners[e], slot(e, c.begin), bytes);
      const Location acc = myDomain == 0 ? partial : slot(0, c.begin);
      for (int e = 1; e < numDomains; ++e)
        ctx.builder.reduce(acc, e == myDomain ? partial : slot(e, c.begin), bytes, ctx.reduction);
      ctx.builder.copy(partial, acc, bytes);
      ctx.finishAvg(partial, c.len);
    });
  }

  ringAllGather(ctx, mine, buf, segments[myDomain]);
}

}  // namespace hetccl::algo
