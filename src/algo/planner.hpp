// The planner: a whole group of operations (GroupStart/End) -> one Schedule for this rank.
//
// Group order (identical on every rank, so every connection's FIFO stream matches): collectives first,
// in call order, then send/recv in call order. Dependencies between operations of one group come only
// from memory they share (see ScheduleBuilder), so independent operations overlap.
#pragma once

#include <span>

#include "algo/coll_op.hpp"
#include "algo/schedule.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"

namespace hetccl::algo {

/// Plans `group` for topology.rank. Throws InvalidArgument (naming the operation and the argument) for a
/// bad topology, type, operator, root, peer or AllToAllv vector, and for a send to self without a
/// matching receive from self in the same group. Pure: no I/O.
Schedule plan(const Topology& topology, std::span<const CollOp> group, const Tuning& tuning);

}  // namespace hetccl::algo
