// One planning function per collective: turns a CollOp into steps, choosing the algorithm (see each
// function). The planner (planner.cc) calls them in group order.
#pragma once

#include <vector>

#include "algo/op_context.hpp"

namespace hetccl::algo {

/// allreduce.cc. One domain: ring (large) or recursive doubling / tree (small, or forced). Several
/// domains: hierarchical (hier/), or a forced ring/tree/rd over every rank ordered by domain.
void planAllReduce(const OpContext& ctx);
/// rooted.cc. Broadcast and Reduce: tree (small or forced tree/rd) or pipelined chain (large, or forced
/// ring/hier). Across domains the chain/tree runs over every rank ordered by domain.
void planBroadcast(const OpContext& ctx);
void planReduce(const OpContext& ctx);
/// gather_scatter.cc. AllGather and ReduceScatter: a ring over every rank ordered by domain (only D links
/// cross domains; each crossing link carries (n-1)/n of the data, the bandwidth-optimal amount).
void planAllGather(const OpContext& ctx);
void planReduceScatter(const OpContext& ctx);
/// pairwise.cc. AllToAll and AllToAllv by pairwise exchange.
void planAllToAll(const OpContext& ctx);
/// hier/hier_allreduce.cc. Domain reduce-scatter, cross-domain exchange of shard pieces among their
/// owners (one per domain, reduced in domain order), domain all-gather.
void planHierAllReduce(const OpContext& ctx);

/// hier/vendor_*.cc: with a vendor communicator in every domain (Topology::domainCollectives), the
/// intra-domain phases are vendor collectives and only the cross-domain share crosses the rings (see
/// each file). Chosen by selection.hpp's vendorHier().
void planVendorHierAllReduce(const OpContext& ctx);
void planVendorHierReduce(const OpContext& ctx);
void planVendorHierReduceScatter(const OpContext& ctx);
void planVendorHierAllGather(const OpContext& ctx);
void planVendorHierBroadcast(const OpContext& ctx);

}  // namespace hetccl::algo
