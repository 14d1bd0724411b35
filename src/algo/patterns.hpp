// Communication patterns over an ordered list of member ranks (a domain, or every rank ordered by domain).
// Each works in place on one buffer `buf` per rank and emits steps into ctx.builder; the calling rank
// must be in `members`. Ranges are in elements, relative to `buf`.
#pragma once

#include <vector>

#include "algo/op_context.hpp"

namespace hetccl::algo {

// --- ring.cc: pipelined ring; bandwidth-optimal for large messages ---
/// buf holds this rank's contribution on every member; afterwards the member at position i holds the
/// full reduction of segments[i] (other segments hold partial sums). Elements are reduced in ring order.
void ringReduceScatter(const OpContext& ctx, const std::vector<int>& members, Location buf,
                       const std::vector<Range>& segments);
/// The member at position i holds segments[i]; afterwards every member holds every segment.
void ringAllGather(const OpContext& ctx, const std::vector<int>& members, Location buf,
                   const std::vector<Range>& segments);

// --- tree.cc: binomial tree; latency-optimal for small messages ---
/// buf holds each member's contribution; afterwards members[rootPos] holds the reduction of `range`.
void treeReduce(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range);
/// Copies `range` of members[rootPos]'s buf to every member's buf.
void treeBroadcast(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range);

// --- chain.cc: pipelined chain from/to the root; bandwidth-optimal broadcast and reduce ---
void chainReduce(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range);
void chainBroadcast(const OpContext& ctx, const std::vector<int>& members, size_t rootPos, Location buf, Range range);

// --- recursive_doubling.cc: log2(n) exchange rounds; every member ends with the reduction ---
/// Partners combine as (lower position) op (higher position), so every member computes the same bits.
void recursiveDoublingAllReduce(const OpContext& ctx, const std::vector<int>& members, Location buf, Range range);

}  // namespace hetccl::algo
