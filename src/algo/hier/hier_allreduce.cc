// Hierarchical all-reduce across domains. recvbuff already holds this rank's contribution.
//  1. Each domain reduce-scatters (ring) its ranks' data: member i of domain d owns segment seg_d[i].
//  2. Pieces are the intervals between the union of all domains' segment boundaries; each piece has
//     exactly one owner per domain. The owners reduce-scatter the piece among themselves (owner in
//     domain k finishes sub-piece k, the only rank computing it) and all-gather the finished parts, so
//     all owners get the same bits. Different pieces have different owners, so every rank's
//     cross-domain links work in parallel.
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
  for (auto it = bounds.begin(); std::next(it) != bounds.end(); ++it) {
    const Range piece{*it, *std::next(it) - *it};
    if (piece.len == 0 || piece.begin < own.begin || piece.begin >= own.begin + own.len) continue;  // not mine
    std::vector<int> owners(numDomains);
    for (int d = 0; d < numDomains; ++d) owners[d] = ownerOf(d, piece.begin);
    // Among the piece's owners: a reduce-scatter then an all-gather. Sub-piece k is finished by the
    // owner in domain k (the only rank that computes it, so every rank gets the same bits) and sent
    // to the others. Every owner sends and receives (D-1)/D of the piece twice: all links busy.
    const std::vector<Range> parts = splitEven(piece.len, numDomains);
    for (int k = 0; k < numDomains; ++k) {
      const Range sub{piece.begin + parts[k].begin, parts[k].len};
      forEachChunk(sub, ctx.chunkElems(), [&](Range c) {
        const Location partial = ctx.at(buf, c.begin);
        const uint64_t bytes = ctx.bytes(c.len);
        if (k != myDomain) {
          ctx.builder.send(owners[k], partial, bytes);
          ctx.builder.recv(owners[k], partial, bytes);
          return;
        }
        for (int e = 0; e < numDomains; ++e)
          if (e != myDomain) ctx.builder.recvReduce(owners[e], partial, bytes, ctx.reduction);
        ctx.finishAvg(partial, c.len);
        for (int e = 0; e < numDomains; ++e)
          if (e != myDomain) ctx.builder.send(owners[e], partial, bytes);
      });
    }
  }

  ringAllGather(ctx, mine, buf, segments[myDomain]);
}

}  // namespace hetccl::algo
