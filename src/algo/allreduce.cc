#include "algo/collectives.hpp"
#include "algo/patterns.hpp"
#include "algo/selection.hpp"

namespace hetccl::algo {

void planAllReduce(const OpContext& ctx) {
  const size_t count = ctx.op.count;
  const Location buf = Location::user(ctx.op.recvbuff);
  ctx.loadContribution(buf, Location::user(ctx.op.sendbuff), count);
  if (vendorHierAllReduce(ctx.topo, ctx.bytes(count), ctx.tuning)) return planVendorHierAllReduce(ctx);
  const std::vector<int> members = ctx.topo.domainOrder();
  switch (chooseAllReduce(ctx.topo, ctx.bytes(count), ctx.tuning)) {
    case AlgoChoice::Hier:
      planHierAllReduce(ctx);
      return;
    case AlgoChoice::Tree:
      // Reduced once, at the root (fixed order), then distributed.
      treeReduce(ctx, members, 0, buf, Range{0, count});
      if (ctx.topo.rank == members[0]) ctx.finishAvg(buf, count);
      treeBroadcast(ctx, members, 0, buf, Range{0, count});
      return;
    case AlgoChoice::RecursiveDoubling:
      recursiveDoublingAllReduce(ctx, members, buf, Range{0, count});
      ctx.finishAvg(buf, count);  // every rank holds the same sum, so the same quotient
      return;
    case AlgoChoice::Ring:
    case AlgoChoice::Auto: {
      const std::vector<Range> segments = splitEven(count, members.size());
      ringReduceScatter(ctx, members, buf, segments);
      const Range own = segments[positionOf(members, ctx.topo.rank)];
      ctx.finishAvg(ctx.at(buf, own.begin), own.len);
      ringAllGather(ctx, members, buf, segments);
      return;
    }
  }
}

}  // namespace hetccl::algo
