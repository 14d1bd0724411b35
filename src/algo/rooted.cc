#include "algo/collectives.hpp"
#include "algo/patterns.hpp"

namespace hetccl::algo {
namespace {

bool useTree(const OpContext& ctx) {
  switch (ctx.tuning.algo) {
    case AlgoChoice::Tree:
    case AlgoChoice::RecursiveDoubling: return true;
    case AlgoChoice::Ring:
    case AlgoChoice::Hier: return false;
    case AlgoChoice::Auto: break;
  }
  return ctx.bytes(ctx.op.count) <= ctx.tuning.smallBytes;
}

}  // namespace

void planBroadcast(const OpContext& ctx) {
  const std::vector<int> members = ctx.topo.domainOrder();
  const size_t rootPos = positionOf(members, ctx.op.root);
  const Location buf = Location::user(ctx.op.recvbuff);
  if (ctx.topo.rank == ctx.op.root) ctx.copyChunked(buf, Location::user(ctx.op.sendbuff), ctx.op.count);
  const Range all{0, ctx.op.count};
  if (useTree(ctx)) {
    treeBroadcast(ctx, members, rootPos, buf, all);
  } else {
    chainBroadcast(ctx, members, rootPos, buf, all);
  }
}

void planReduce(const OpContext& ctx) {
  const std::vector<int> members = ctx.topo.domainOrder();
  const size_t rootPos = positionOf(members, ctx.op.root);
  const bool isRoot = ctx.topo.rank == ctx.op.root;
  const size_t count = ctx.op.count;
  // Non-roots reduce in scratch: their recvbuff is not significant (NCCL semantics).
  const Location work = isRoot ? Location::user(ctx.op.recvbuff) : ctx.builder.allocScratch(ctx.bytes(count));
  ctx.loadContribution(work, Location::user(ctx.op.sendbuff), count);
  if (useTree(ctx)) {
    treeReduce(ctx, members, rootPos, work, Range{0, count});
  } else {
    chainReduce(ctx, members, rootPos, work, Range{0, count});
  }
  if (isRoot) ctx.finishAvg(work, count);
}

}  // namespace hetccl::algo
