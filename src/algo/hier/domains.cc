#include "algo/hier/domains.hpp"

#include <algorithm>
#include <set>

namespace hetccl::algo::hier {

Domains Domains::of(const Topology& topo) {
  Domains d;
  d.members.resize(topo.numDomains());
  for (int k = 0; k < topo.numDomains(); ++k) d.members[k] = topo.membersOf(k);
  d.mine = topo.domainOf[topo.rank];
  d.myPos = positionOf(d.members[d.mine], topo.rank);
  return d;
}

std::vector<Range> vendorBlocks(Range r, size_t n) {
  const size_t q = r.len / n;
  std::vector<Range> out(n);
  for (size_t k = 0; k < n; ++k) out[k] = Range{r.begin + k * q, q};
  out[n - 1].len = r.len - (n - 1) * q;
  return out;
}

uint32_t domainReduction(const OpContext& ctx) {
  const RedOpKind k = ctx.op.op.kind;
  if (k != RedOpKind::Avg && k != RedOpKind::PreMulSum) return ctx.reduction;
  Reduction sum{ctx.op.type, ReduceOp{}, 1};
  sum.op.kind = RedOpKind::Sum;
  return ctx.builder.addReduction(sum);
}

void domainReduceScatter(const OpContext& ctx, const Domains& dom, Location buf, Range r, uint32_t red) {
  const size_t n = dom.size(dom.mine), q = r.len / n, tail = r.len - n * q;
  const Location base = ctx.at(buf, r.begin);
  ctx.builder.domainCollective(DomainColl::ReduceScatter, ctx.at(base, dom.myPos * q), base, ctx.bytes(q),
                               ctx.bytes(n * q), ctx.bytes(q), -1, red);
  const bool last = dom.myPos == n - 1;
  const Location rest = ctx.at(base, n * q);
  ctx.builder.domainCollective(DomainColl::Reduce, rest, rest, ctx.bytes(tail), ctx.bytes(tail),
                               last ? ctx.bytes(tail) : 0, static_cast<int>(n - 1), red);
}

void domainAllGather(const OpContext& ctx, const Domains& dom, Location buf, Range r) {
  const size_t n = dom.size(dom.mine), q = r.len / n, tail = r.len - n * q;
  const Location base = ctx.at(buf, r.begin);
  ctx.builder.domainCollective(DomainColl::AllGather, base, ctx.at(base, dom.myPos * q), ctx.bytes(q), ctx.bytes(q),
                               ctx.bytes(n * q), -1, ctx.reduction);
  const bool last = dom.myPos == n - 1;
  const Location rest = ctx.at(base, n * q);
  ctx.builder.domainCollective(DomainColl::Broadcast, rest, rest, ctx.bytes(tail), last ? ctx.bytes(tail) : 0,
                               ctx.bytes(tail), static_cast<int>(n - 1), ctx.reduction);
}

void crossDomainReduce(const OpContext& ctx, const Domains& dom, Location buf,
                       const std::vector<std::vector<Range>>& segments, Range r, int resultDomain) {
  const int numDomains = dom.count(), myDomain = dom.mine;
  std::set<size_t> bounds{r.begin + r.len};
  for (int d = 0; d < numDomains; ++d)
    for (const Range& s : segments[d]) bounds.insert(s.begin);
  const Range own = segments[myDomain][dom.myPos];
  // Owner, in domain d, of the piece starting at element x.
  auto ownerOf = [&](int d, size_t x) {
    for (size_t i = 0; i < segments[d].size(); ++i)
      if (x >= segments[d][i].begin && x < segments[d][i].begin + segments[d][i].len) return dom.members[d][i];
    return -1;
  };
  const bool wantResult = resultDomain < 0 || resultDomain == myDomain;
  for (auto it = bounds.begin(); std::next(it) != bounds.end(); ++it) {
    const Range piece{*it, *std::next(it) - *it};
    if (piece.len == 0 || piece.begin < own.begin || piece.begin >= own.begin + own.len) continue;  // not mine
    std::vector<int> owners(numDomains);
    for (int d = 0; d < numDomains; ++d) owners[d] = ownerOf(d, piece.begin);
    // Sub-piece k is finished by the owner in domain k (the only rank that computes it, so every rank
    // gets the same bits) and sent to the owners that want the result.
    const std::vector<Range> parts = splitEven(piece.len, numDomains);
    for (int k = 0; k < numDomains; ++k) {
      const Range sub{piece.begin + parts[k].begin, parts[k].len};
      forEachChunk(sub, ctx.chunkElems(), [&](Range c) {
        const Location partial = ctx.at(buf, c.begin);
        const uint64_t bytes = ctx.bytes(c.len);
        if (k != myDomain) {
          ctx.builder.send(owners[k], partial, bytes);
          if (wantResult) ctx.builder.recv(owners[k], partial, bytes);
          return;
        }
        for (int e = 0; e < numDomains; ++e)
          if (e != myDomain) ctx.builder.recvReduce(owners[e], partial, bytes, ctx.reduction);
        ctx.finishAvg(partial, c.len);
        for (int e = 0; e < numDomains; ++e)
          if (e != myDomain && (resultDomain < 0 || e == resultDomain)) ctx.builder.send(owners[e], partial, bytes);
      });
    }
  }
}

std::vector<Range> hierChunks(const OpContext& ctx, size_t count) {
  const size_t total = ctx.bytes(count);
  const size_t bytes = std::min(std::max<size_t>(total / 4, ctx.tuning.hierMinChunkBytes), ctx.tuning.hierChunkBytes);
  const size_t elems = std::max<size_t>(1, bytes / ctx.elemSize);
  std::vector<Range> out;
  forEachChunk(Range{0, count}, elems, [&](Range c) { out.push_back(c); });
  return out;
}

}  // namespace hetccl::algo::hier
