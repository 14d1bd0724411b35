#include "algo/collectives.hpp"
#include "algo/patterns.hpp"
#include "algo/selection.hpp"

namespace hetccl::algo {
namespace {

/// Segment of ring position i = the block of rank members[i].
std::vector<Range> blocksByPosition(const std::vector<int>& members, size_t count) {
  std::vector<Range> out;
  for (int r : members) out.push_back(Range{static_cast<size_t>(r) * count, count});
  return out;
}

}  // namespace

void planAllGather(const OpContext& ctx) {
  if (vendorHier(ctx.topo, ctx.tuning)) return planVendorHierAllGather(ctx);
  const size_t count = ctx.op.count;
  const std::vector<int> members = ctx.topo.domainOrder();
  const Location buf = Location::user(ctx.op.recvbuff);
  // Dropped when in place (sendbuff == recvbuff + rank * count).
  ctx.copyChunked(ctx.at(buf, ctx.topo.rank * count), Location::user(ctx.op.sendbuff), count);
  ringAllGather(ctx, members, buf, blocksByPosition(members, count));
}

void planReduceScatter(const OpContext& ctx) {
  if (vendorHier(ctx.topo, ctx.tuning)) return planVendorHierReduceScatter(ctx);
  const size_t count = ctx.op.count;
  const size_t total = count * static_cast<size_t>(ctx.topo.nranks);
  const std::vector<int> members = ctx.topo.domainOrder();
  // Work in scratch: the input stays intact (it may overlap recvbuff) and each contribution is scaled once.
  const Location work = ctx.builder.allocScratch(ctx.bytes(total));
  ctx.loadContribution(work, Location::user(ctx.op.sendbuff), total);
  ringReduceScatter(ctx, members, work, blocksByPosition(members, count));
  const Location out = Location::user(ctx.op.recvbuff);
  ctx.builder.copy(out, ctx.at(work, ctx.topo.rank * count), ctx.bytes(count));
  ctx.finishAvg(out, count);
}

}  // namespace hetccl::algo
