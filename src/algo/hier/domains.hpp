// Building blocks of the hierarchical algorithms (this folder): the topology's domains, the blocks a
// domain reduce-scatter leaves on each member, the vendor collectives inside a domain
// (StepKind::DomainCollective) and the cross-domain reduction among the owners of each piece.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/op_context.hpp"

namespace hetccl::algo::hier {

/// Every domain's members (increasing rank; a member's domain rank is its position) and this rank's place.
struct Domains {
  std::vector<std::vector<int>> members;
  int mine = 0;       ///< this rank's domain
  size_t myPos = 0;   ///< this rank's domain rank
  static Domains of(const Topology& topo);
  size_t size(int d) const { return members[d].size(); }
  int count() const { return static_cast<int>(members.size()); }
};

/// The blocks of `r` a vendor reduce-scatter / all-gather over n members uses: n blocks of len / n
/// elements, the remainder added to the last block (handled by a vendor reduce / broadcast rooted there).
std::vector<Range> vendorBlocks(Range r, size_t n);

/// The reduction a domain collective uses for ctx.op: Sum for Avg (divided once, after the full sum) and
/// for PreMulSum (every contribution was scaled when loaded), the operator itself otherwise.
uint32_t domainReduction(const OpContext& ctx);

/// Vendor steps in this rank's domain over `r` of `buf` (in place). Reduce-scatter: member k ends with
/// the domain's reduction (`red`) of vendorBlocks(r, n)[k]. All-gather: member k holds block k; every
/// member ends with all of `r`.
void domainReduceScatter(const OpContext& ctx, const Domains& dom, Location buf, Range r, uint32_t red);
void domainAllGather(const OpContext& ctx, const Domains& dom, Location buf, Range r);

/// The cross-domain phase of a hierarchical reduction over `r`: segments[d][i] is the part of `r` member
/// i of domain d holds, reduced over its domain. Pieces (between the union of all domains' segment
/// boundaries) have one owner per domain; the owners reduce-scatter each piece among themselves (sub-piece
/// k finished by the owner in domain k, Avg divided there) and send the finished sub-pieces to the other
/// owners (resultDomain < 0) or to the owner in domain resultDomain only. Every owner's links are busy.
void crossDomainReduce(const OpContext& ctx, const Domains& dom, Location buf,
                       const std::vector<std::vector<Range>>& segments, Range r, int resultDomain);

/// `count` elements split into the pipeline chunks of the hierarchical algorithms: 4 chunks, each at most
/// Tuning::hierChunkBytes and at least Tuning::hierMinChunkBytes (fewer chunks for smaller operations).
std::vector<Range> hierChunks(const OpContext& ctx, size_t count);

}  // namespace hetccl::algo::hier
