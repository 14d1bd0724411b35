// All-reduce and reduce across domains with the vendor library inside each domain
// (Topology::domainCollectives). The buffer holds this rank's contribution. Per pipeline chunk:
//  1. a vendor reduce-scatter in every domain (member k ends with the domain's sum of block k);
//  2. crossDomainReduce between the owners of each piece over the rings (the only bytes that leave a
//     domain: every owner sends and receives (D-1)/D of what it owns twice);
//  3. a vendor all-gather in every domain (reduce: in the root's domain only, whose owners alone got the
//     finished pieces).
// The vendor calls run on their own stream in list order: RS(0), RS(1), AG(0), RS(2), AG(1), ... so the
// reduce-scatter of chunk k+1 overlaps the cross-domain exchange of chunk k.
#include "algo/collectives.hpp"
#include "algo/hier/domains.hpp"

namespace hetccl::algo {
namespace {

void vendorHierReduce(const OpContext& ctx, Location buf, int resultDomain) {
  const hier::Domains dom = hier::Domains::of(ctx.topo);
  const uint32_t red = hier::domainReduction(ctx);
  const std::vector<Range> chunks = hier::hierChunks(ctx, ctx.op.count);
  if (chunks.empty()) return;
  hier::domainReduceScatter(ctx, dom, buf, chunks[0], red);
  for (size_t k = 0; k < chunks.size(); ++k) {
    if (k + 1 < chunks.size()) hier::domainReduceScatter(ctx, dom, buf, chunks[k + 1], red);
    std::vector<std::vector<Range>> segments(dom.count());
    for (int d = 0; d < dom.count(); ++d) segments[d] = hier::vendorBlocks(chunks[k], dom.size(d));
    hier::crossDomainReduce(ctx, dom, buf, segments, chunks[k], resultDomain);
    if (resultDomain < 0 || resultDomain == dom.mine) hier::domainAllGather(ctx, dom, buf, chunks[k]);
  }
}

}  // namespace

void planVendorHierAllReduce(const OpContext& ctx) {
  vendorHierReduce(ctx, Location::user(ctx.op.recvbuff), -1);
}

void planVendorHierReduce(const OpContext& ctx) {
  const bool isRoot = ctx.topo.rank == ctx.op.root;
  const size_t count = ctx.op.count;
  // Non-roots reduce in scratch: their recvbuff is not significant (NCCL semantics).
  const Location work = isRoot ? Location::user(ctx.op.recvbuff) : ctx.builder.allocScratch(ctx.bytes(count));
  ctx.loadContribution(work, Location::user(ctx.op.sendbuff), count);
  vendorHierReduce(ctx, work, ctx.topo.domainOf[ctx.op.root]);
}

}  // namespace hetccl::algo
