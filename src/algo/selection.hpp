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

/// The algorithm `kind` (not Send/Recv) of `bytes` bytes takes on `topology` with `tuning`, and its
/// phases, in one line.
std::string describeChoice(const Topology& topology, CollKind kind, size_t bytes, const Tuning& tuning);

}  // namespace hetccl::algo
