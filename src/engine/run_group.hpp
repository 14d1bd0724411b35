// The communicator's entry point: plan a group of operations and execute it.
#pragma once

#include <span>

#include "algo/coll_op.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "engine/exec_context.hpp"
#include "engine/links.hpp"

namespace hetccl::engine {

/// plan(topology, group, tuning) then execute() on the calling thread; blocks until this rank's part of
/// every operation in the group is done. Throws what plan() and execute() throw.
void runGroup(const algo::Topology& topology, std::span<const algo::CollOp> group, Links& links,
              const ExecContext& ctx, const algo::Tuning& tuning = algo::Tuning::fromConfig());

}  // namespace hetccl::engine
