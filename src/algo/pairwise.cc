// Pairwise exchange all-to-all(v): in step k, send the block for rank r+k and receive the block from rank
// r-k; every rank's links are busy in every step. When the send and receive regions overlap (in place),
// the input is first copied to scratch so no receive overwrites data still to be sent.
// With the vendor library inside the domains (algo::vendorHier), the blocks between members of this
// rank's domain go in one vendor exchange (a group of sends and receives) and only the others on rings.
#include <algorithm>

#include "algo/collectives.hpp"
#include "algo/hier/domains.hpp"
#include "algo/patterns.hpp"
#include "algo/selection.hpp"
#include "core/error.hpp"

namespace hetccl::algo {
namespace {

struct Blocks {
  std::vector<Range> send, recv;  ///< per rank, in elements
};

Blocks blocksOf(const CollOp& op, int nranks) {
  Blocks b;
  for (int r = 0; r < nranks; ++r) {
    if (op.kind == CollKind::AllToAll) {
      b.send.push_back(Range{r * op.count, op.count});
      b.recv.push_back(Range{r * op.count, op.count});
    } else {
      b.send.push_back(Range{op.sdispls[r], op.sendcounts[r]});
      b.recv.push_back(Range{op.rdispls[r], op.recvcounts[r]});
    }
  }
  return b;
}

size_t extentOf(const std::vector<Range>& blocks) {
  size_t end = 0;
  for (const Range& r : blocks)
    if (r.len > 0) end = std::max(end, r.begin + r.len);
  return end;
}

}  // namespace

void planAllToAll(const OpContext& ctx) {
  const int n = ctx.topo.nranks, rank = ctx.topo.rank;
  const Blocks blocks = blocksOf(ctx.op, n);
  const size_t sendExtent = extentOf(blocks.send), recvExtent = extentOf(blocks.recv);
  if (sendExtent == 0 && recvExtent == 0) return;
  Location src = Location::user(ctx.op.sendbuff);
  const Location dst = Location::user(ctx.op.recvbuff);
  const uint64_t s0 = src.addr, s1 = s0 + ctx.bytes(sendExtent), r0 = dst.addr, r1 = r0 + ctx.bytes(recvExtent);
  if (sendExtent > 0 && recvExtent > 0 && s0 < r1 && r0 < s1) {
    const Location copy = ctx.builder.allocScratch(ctx.bytes(sendExtent));
    ctx.builder.copy(copy, src, ctx.bytes(sendExtent));
    src = copy;
  }
  const size_t chunk = ctx.chunkElems();
  const bool vendor = vendorHier(ctx.topo, ctx.tuning);
  auto inMyDomain = [&](int r) { return vendor && ctx.topo.domainOf[r] == ctx.topo.domainOf[rank]; };
  if (vendor) {
    const hier::Domains dom = hier::Domains::of(ctx.topo);
    std::vector<DomainTransfer> transfers;
    for (int k = 1; k < n; ++k) {
      const int to = (rank + k) % n, from = (rank - k + n) % n;
      if (inMyDomain(to))
        transfers.push_back({true, static_cast<int>(positionOf(dom.members[dom.mine], to)),
                             ctx.at(src, blocks.send[to].begin), ctx.bytes(blocks.send[to].len)});
      if (inMyDomain(from))
        transfers.push_back({false, static_cast<int>(positionOf(dom.members[dom.mine], from)),
                             ctx.at(dst, blocks.recv[from].begin), ctx.bytes(blocks.recv[from].len)});
    }
    ctx.builder.domainExchange(transfers);
  }
  for (int k = 0; k < n; ++k) {
    const int to = (rank + k) % n, from = (rank - k + n) % n;
    if (k == 0) {
      if (blocks.send[rank].len != blocks.recv[rank].len)
        throw InvalidArgument(concat("alltoallv: rank ", rank, " sends ", blocks.send[rank].len,
                                     " elements to itself but expects ", blocks.recv[rank].len));
      ctx.builder.copy(ctx.at(dst, blocks.recv[rank].begin), ctx.at(src, blocks.send[rank].begin),
                       ctx.bytes(blocks.send[rank].len));
      continue;
    }
    if (!inMyDomain(to))
      forEachChunk(blocks.send[to], chunk, [&](Range c) { ctx.builder.send(to, ctx.at(src, c.begin), ctx.bytes(c.len)); });
    if (!inMyDomain(from))
      forEachChunk(blocks.recv[from], chunk, [&](Range c) { ctx.builder.recv(from, ctx.at(dst, c.begin), ctx.bytes(c.len)); });
  }
}

}  // namespace hetccl::algo
