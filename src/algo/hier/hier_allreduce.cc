// Hierarchical all-reduce across domains over the rings (no vendor library). recvbuff already holds this
// rank's contribution.
//  1. Each domain reduce-scatters (ring) its ranks' data: member i of domain d owns segment seg_d[i].
//  2. Pieces are the intervals between the union of all domains' segment boundaries; each piece has
//     exactly one owner per domain. The owners reduce-scatter the piece among themselves and all-gather
//     the finished parts (crossDomainReduce), so all owners get the same bits. Different pieces have
//     different owners, so every rank's cross-domain links work in parallel.
//  3. Avg divides each piece once, at its owners, after the full sum.
//  4. Each domain all-gathers (ring) the finished segments.
#include "algo/collectives.hpp"
#include "algo/hier/domains.hpp"
#include "algo/patterns.hpp"

namespace hetccl::algo {

void planHierAllReduce(const OpContext& ctx) {
  const size_t count = ctx.op.count;
  const hier::Domains dom = hier::Domains::of(ctx.topo);
  const Location buf = Location::user(ctx.op.recvbuff);
  std::vector<std::vector<Range>> segments(dom.count());
  for (int d = 0; d < dom.count(); ++d) segments[d] = splitEven(count, dom.size(d));
  const std::vector<int>& mine = dom.members[dom.mine];
  ringReduceScatter(ctx, mine, buf, segments[dom.mine]);
  hier::crossDomainReduce(ctx, dom, buf, segments, Range{0, count}, -1);
  ringAllGather(ctx, mine, buf, segments[dom.mine]);
}

}  // namespace hetccl::algo
