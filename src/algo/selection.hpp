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
/// All-reduce without the vendor: the algorithm for `bytes` bytes. Under auto: the first of
/// Tuning::allReduceBands (HETCCL_TUNING_FILE) that holds `bytes`; else two ranks up to
/// Tuning::pairExchangeBytes, one exchange (recursive doubling); several domains, hierarchical -- but
/// recursive doubling up to HETCCL_SMALL_BYTES with Tuning::smallAllReduceByDoubling (the stream pipeline:
/// latency-bound, log2(n) exchanges beat three phases, 1.45-1.6x on GPU ranks); one domain, and host calls
/// where every domain has one rank (Tuning::oneRankDomainsAsOneDomain): recursive doubling up to
/// HETCCL_SMALL_BYTES, then with Tuning::treeForManyRanks the tree up to treeAllReduceMaxBytes(nranks),
/// then the ring.
AlgoChoice chooseAllReduce(const Topology& topology, size_t bytes, const Tuning& tuning);
/// The largest all-reduce a one-domain host call of `nranks` ranks runs as a tree (Tuning::treeForManyRanks):
/// 0 below 8 ranks, 1 MiB from 8, 4 MiB from 12. Measured on 16 CPU cores over shm, forced tree against
/// ring (bench/results/host_idle_spin_2026-11-29/run3_crossovers): the tree ahead 1.07-1.21x at 8 ranks
/// from 128 KiB to 1 MiB (the ring 1.11x ahead at 2 MiB), 1.25-1.58x at 12 ranks up to 2 MiB (even at
/// 4 MiB), 1.12-2.29x at 16 ranks up to 4 MiB; at 4 and 6 ranks the ring leads or ties. A machine whose
/// crossovers differ writes its own in a tuning file.
size_t treeAllReduceMaxBytes(int nranks);
/// Broadcast / reduce without the vendor: tree (true) or pipelined chain.
bool rootedUsesTree(size_t bytes, const Tuning& tuning);

/// The algorithm `kind` (not Send/Recv) of `bytes` bytes takes on `topology` with `tuning`, and its
/// phases, in one line.
std::string describeChoice(const Topology& topology, CollKind kind, size_t bytes, const Tuning& tuning);

}  // namespace hetccl::algo
