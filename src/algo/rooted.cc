#include "algo/collectives.hpp"
#include "algo/patterns.hpp"
#include "algo/selection.hpp"

namespace hetccl::algo {

void planBroadcast(const OpContext& ctx) {
  if (vendorHier(ctx.topo, ctx.tuning)) return planVendorHierBroadcast(ctx);
  const std::vector<int> members = ctx.topo.domainOrder();
  const size_t rootPos = positionOf(members, ctx.op.root);
  const Location buf = Location::user(ctx.op.recvbuff);
  if (ctx.topo.rank == ctx.op.root) ctx.copyChunked(buf, Location::user(ctx.op.sendbuff), ctx.op.count);
  const Range all{0, ctx.op.count};
  if (rootedUsesTree(ctx.bytes(ctx.op.count), ctx.tuning)) {
    treeBroadcast(ctx, members, rootPos, buf, all);
  } else {
    chainBroadcast(ctx, members, rootPos, buf, all);
  }
}

void planReduce(const OpContext& ctx) {
  if (vendorHier(ctx.topo, ctx.tuning)) return planVendorHierReduce(ctx);
  const std::vector<int> members = ctx.topo.domainOrder();
  const size_t rootPos = positionOf(members, ctx.op.root);
  const bool isRoot = ctx.topo.rank == ctx.op.root;
  const size_t count = ctx.op.count;
  // Non-roots reduce in scratch: their recvbuff is not significant (NCCL semantics).
  const Location work = isRoot ? Location::user(ctx.op.recvbuff) : ctx.builder.allocScratch(ctx.bytes(count));
  ctx.loadContribution(work, Location::user(ctx.op.sendbuff), count);
  if (rootedUsesTree(ctx.bytes(ctx.op.count), ctx.tuning)) {
    treeReduce(ctx, members, rootPos, work, Range{0, count});
  } else {
    chainReduce(ctx, members, rootPos, work, Range{0, count});
  }
  if (isRoot) ctx.finishAvg(work, count);
}

}  // namespace hetccl::algo
