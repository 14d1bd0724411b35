// Broadcast across domains with the vendor library inside each domain (Topology::domainCollectives).
// Per pipeline chunk: a vendor broadcast in the root's domain; then, for every other domain d of n
// members, block k of the chunk (vendorBlocks) is sent by member k mod n_root of the root's domain to
// member k of d, and a vendor all-gather in d completes the chunk. The chunk crosses into each other
// domain once, spread over every member's links.
#include "algo/collectives.hpp"
#include "algo/hier/domains.hpp"

namespace hetccl::algo {

void planVendorHierBroadcast(const OpContext& ctx) {
  const Topology& topo = ctx.topo;
  const hier::Domains dom = hier::Domains::of(topo);
  const int rootDomain = topo.domainOf[ctx.op.root];
  const size_t rootPos = positionOf(dom.members[rootDomain], ctx.op.root), nRoot = dom.size(rootDomain);
  const bool isRoot = topo.rank == ctx.op.root;
  const Location send = Location::user(ctx.op.sendbuff), recv = Location::user(ctx.op.recvbuff);
  for (const Range& chunk : hier::hierChunks(ctx, ctx.op.count)) {
    if (dom.mine == rootDomain) {
      ctx.builder.domainCollective(DomainColl::Broadcast, ctx.at(recv, chunk.begin), ctx.at(send, chunk.begin),
                                   ctx.bytes(chunk.len), isRoot ? ctx.bytes(chunk.len) : 0, ctx.bytes(chunk.len),
                                   static_cast<int>(rootPos), ctx.reduction);
      for (int d = 0; d < dom.count(); ++d) {
        if (d == rootDomain) continue;
        const std::vector<Range> blocks = hier::vendorBlocks(chunk, dom.size(d));
        for (size_t k = 0; k < blocks.size(); ++k)
          if (k % nRoot == dom.myPos)
            ctx.builder.send(dom.members[d][k], ctx.at(recv, blocks[k].begin), ctx.bytes(blocks[k].len));
      }
      continue;
    }
    const Range mine = hier::vendorBlocks(chunk, dom.size(dom.mine))[dom.myPos];
    ctx.builder.recv(dom.members[rootDomain][dom.myPos % nRoot], ctx.at(recv, mine.begin), ctx.bytes(mine.len));
    hier::domainAllGather(ctx, dom, recv, chunk);
  }
}

}  // namespace hetccl::algo
