// Which algorithm the planner takes for a collective of a given size on a given topology, as one line a
// person can read ("hier-vendor: domain reduce-scatter (vendor) -> ...") for hetccl-info --comm and the
// INFO log. The planning functions (collectives.hpp) take their decision from the same functions, so the
// table printed is the table used.
#pragma once

#include <cstddef>
#include <string>

#include "algo/coll_op.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"

namespace hetccl::algo {

/// Whether a collective runs hierarchically with the vendor library inside the domains: the topology
/// has domain communicators and several domains, and HETCCL_ALGO is hier, or auto with some domain of
/// several ranks (with one rank per domain the vendor has nothing to do).
bool vendorHier(const Topology& topology, const Tuning& tuning);

/// Whether an all-reduce of `bytes` bytes runs hierarchically with the vendor inside the domains: as
/// vendorHier(), but under HETCCL_ALGO=auto with Tuning::smallAllReduceByDoubling (the stream pipeline)
/// not up to HETCCL_SMALL_BYTES, where chooseAllReduce's recursive doubling over every rank is faster.
bool vendorHierAllReduce(const Topology& topology, size_t bytes, const Tuning& tuning);
/// All-reduce without the vendor: the algorithm for `bytes` bytes. Under auto: two ranks up to
/// Tuning::pairExchangeBytes, one exchange (recursive doubling); one domain, recursive doubling up to
/// HETCCL_SMALL_BYTES, then ring; several domains, hierarchical -- but recursive doubling up to
/// HETCCL_SMALL_BYTES with Tuning::smallAllReduceByDoubling (latency-bound: log2(n) exchanges beat three
/// phases, 1.45-1.6x on GPU ranks), on host calls where every domain has one rank
/// (Tuning::smallAllReduceByDoublingOnOneRankDomains).
AlgoChoice chooseAllReduce(const Topology& topology, size_t bytes, const Tuning& tuning);
/// Broadcast / reduce without the vendor: tree (true) or pipelined chain.
bool rootedUsesTree(size_t bytes, const Tuning& tuning);

/// The algorithm `kind` (not Send/Recv) of `bytes` bytes takes on `topology` with `tuning`, and its
/// phases, in one line.
std::string describeChoice(const Topology& topology, CollKind kind, size_t bytes, const Tuning& tuning);

}  // namespace hetccl::algo
