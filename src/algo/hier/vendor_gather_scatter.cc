// Reduce-scatter and all-gather across domains with the vendor library inside each domain
// (Topology::domainCollectives). Per pipeline chunk (the same columns [b, b+L) of every rank's block):
// in domain d of n members, the blocks of the other ranks ("foreign" blocks, in rank order) are split into
// n shares; member k's segment is its own block followed by share k (and padding, so that every segment
// has the same length S, as the vendor's reduce-scatter and all-gather require).
//  reduce-scatter: every rank lays out its input as the n segments in scratch, a vendor reduce-scatter
//    leaves member k the domain's sum of segment k, it sends each piece of its share to the rank that
//    owns it and reduces what the other domains send for its own block;
//  all-gather: every rank sends its block to the members of the other domains whose shares hold it, puts
//    its block and what it received into its segment, a vendor all-gather gives every member all
//    segments, and local copies put them in rank order.
// Every foreign byte crosses between domains once; the rest moves through the vendor library.
#include "algo/collectives.hpp"
#include "algo/hier/domains.hpp"

namespace hetccl::algo {
namespace {

/// One domain's segments for a chunk of L columns.
struct SegmentLayout {
  std::vector<int> foreign;   ///< ranks outside the domain, increasing
  std::vector<Range> shares;  ///< per member, ranges of the foreign space (foreign.size() * L elements)
  size_t L = 0, S = 0;        ///< columns per block, elements per segment

  SegmentLayout(const Topology& topo, int domain, size_t members, size_t columns) : L(columns) {
    for (int r = 0; r < topo.nranks; ++r)
      if (topo.domainOf[r] != domain) foreign.push_back(r);
    shares = splitEven(foreign.size() * L, members);
    S = L + shares[0].len;  // splitEven puts the longer shares first
  }
  /// Index of rank r among `foreign`.
  size_t foreignIndex(int r) const { return positionOf(foreign, r); }
  /// Calls fn(foreign rank, column offset in its block, offset in the share, length) for the pieces of
  /// the intersection of share k with the foreign-space range `x`.
  template <typename Fn>
  void forEachPiece(size_t k, Range x, Fn fn) const {
    const size_t lo = std::max(shares[k].begin, x.begin), hi = std::min(shares[k].begin + shares[k].len, x.begin + x.len);
    for (size_t at = lo; at < hi;) {
      const size_t f = at / L, o = at % L, len = std::min(L - o, hi - at);
      fn(foreign[f], o, at - shares[k].begin, len);
      at += len;
    }
  }
  Range all() const { return Range{0, foreign.size() * L}; }
  Range blockOf(int r) const { return Range{foreignIndex(r) * L, L}; }
};

/// Calls fn(chunk, this domain's layout for the chunk, its scratch area) for every pipeline chunk of
/// the block columns; alternate chunks use two scratch areas (the dependencies order each reuse after the
/// previous user).
template <typename Fn>
void forEachChunkLayout(const OpContext& ctx, const hier::Domains& dom, Fn fn) {
  const std::vector<Range> chunks = hier::hierChunks(ctx, ctx.op.count);
  if (chunks.empty()) return;
  const size_t n = dom.size(dom.mine);
  const SegmentLayout widest(ctx.topo, dom.mine, n, chunks[0].len);  // the first chunk is the longest
  const uint64_t areaBytes = ctx.bytes(n * widest.S);
  const Location areas[2] = {ctx.builder.allocScratch(areaBytes), ctx.builder.allocScratch(areaBytes)};
  for (size_t j = 0; j < chunks.size(); ++j)
    fn(chunks[j], SegmentLayout(ctx.topo, dom.mine, n, chunks[j].len), areas[j % 2]);
}

}  // namespace

void planVendorHierReduceScatter(const OpContext& ctx) {
  const Topology& topo = ctx.topo;
  const hier::Domains dom = hier::Domains::of(topo);
  const size_t c = ctx.op.count, n = dom.size(dom.mine);
  const uint32_t red = hier::domainReduction(ctx);
  const Location send = Location::user(ctx.op.sendbuff), recv = Location::user(ctx.op.recvbuff);
  forEachChunkLayout(ctx, dom, [&](Range chunk, const SegmentLayout& mine, Location area) {
    const size_t b = chunk.begin;
    auto segment = [&](size_t k) { return ctx.at(area, k * mine.S); };
    for (size_t k = 0; k < n; ++k) {
      ctx.loadContribution(segment(k), ctx.at(send, dom.members[dom.mine][k] * c + b), mine.L);
      mine.forEachPiece(k, mine.all(), [&](int r, size_t o, size_t inShare, size_t len) {
        ctx.loadContribution(ctx.at(segment(k), mine.L + inShare), ctx.at(send, r * c + b + o), len);
      });
    }
    ctx.builder.domainCollective(DomainColl::ReduceScatter, segment(dom.myPos), area, ctx.bytes(mine.S),
                                 ctx.bytes(n * mine.S), ctx.bytes(mine.S), -1, red);
    const Location own = segment(dom.myPos);
    // The domain's partial sums of my share go to their owners...
    mine.forEachPiece(dom.myPos, mine.all(), [&](int r, size_t, size_t inShare, size_t len) {
      ctx.builder.send(r, ctx.at(own, mine.L + inShare), ctx.bytes(len));
    });
    // ...and the other domains' partial sums of my block come to me.
    for (int e = 0; e < dom.count(); ++e) {
      if (e == dom.mine) continue;
      const SegmentLayout theirs(topo, e, dom.size(e), chunk.len);
      const Range myBlock = theirs.blockOf(topo.rank);
      for (size_t k = 0; k < dom.size(e); ++k)
        theirs.forEachPiece(k, myBlock, [&](int, size_t column, size_t, size_t len) {
          ctx.builder.recvReduce(dom.members[e][k], ctx.at(own, column), ctx.bytes(len), ctx.reduction);
        });
    }
    ctx.finishAvg(own, mine.L);
    ctx.builder.copy(ctx.at(recv, b), own, ctx.bytes(mine.L));
  });
}

void planVendorHierAllGather(const OpContext& ctx) {
  const Topology& topo = ctx.topo;
  const hier::Domains dom = hier::Domains::of(topo);
  const size_t c = ctx.op.count, n = dom.size(dom.mine);
  const Location send = Location::user(ctx.op.sendbuff), recv = Location::user(ctx.op.recvbuff);
  forEachChunkLayout(ctx, dom, [&](Range chunk, const SegmentLayout& mine, Location area) {
    const size_t b = chunk.begin;
    auto segment = [&](size_t k) { return ctx.at(area, k * mine.S); };
    const Location own = segment(dom.myPos);
    ctx.builder.copy(own, ctx.at(send, b), ctx.bytes(mine.L));
    // My block goes to the members of the other domains whose shares hold it...
    for (int e = 0; e < dom.count(); ++e) {
      if (e == dom.mine) continue;
      const SegmentLayout theirs(topo, e, dom.size(e), chunk.len);
      const Range myBlock = theirs.blockOf(topo.rank);
      for (size_t k = 0; k < dom.size(e); ++k)
        theirs.forEachPiece(k, myBlock, [&](int, size_t o, size_t, size_t len) {
          ctx.builder.send(dom.members[e][k], ctx.at(send, b + o), ctx.bytes(len));
        });
    }
    // ...and the pieces of my share come to me.
    mine.forEachPiece(dom.myPos, mine.all(), [&](int r, size_t, size_t inShare, size_t len) {
      ctx.builder.recv(r, ctx.at(own, mine.L + inShare), ctx.bytes(len));
    });
    ctx.builder.domainCollective(DomainColl::AllGather, area, own, ctx.bytes(mine.S), ctx.bytes(mine.S),
                                 ctx.bytes(n * mine.S), -1, ctx.reduction);
    for (size_t k = 0; k < n; ++k) {
      ctx.builder.copy(ctx.at(recv, dom.members[dom.mine][k] * c + b), segment(k), ctx.bytes(mine.L));
      mine.forEachPiece(k, mine.all(), [&](int r, size_t o, size_t inShare, size_t len) {
        ctx.builder.copy(ctx.at(recv, r * c + b + o), ctx.at(segment(k), mine.L + inShare), ctx.bytes(len));
      });
    }
  });
}

}  // namespace hetccl::algo
