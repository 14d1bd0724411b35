// The communicator's entry point: plan a group of operations and execute it.
#pragma once

#include <span>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/schedule.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "exec/host/exec_context.hpp"
#include "transport/base/links.hpp"
#include "transport/base/call_stamp.hpp"

namespace hetccl::engine {

/// A group planned and stamped, ready to run; nothing has been sent yet.
struct PreparedGroup {
  algo::Schedule schedule;
  std::vector<transport::CallStamp> stamps;  ///< per step (call_stamps.hpp)
};

/// plan(topology, group, tuning) and the messages' call stamps. Throws plan()'s InvalidArgument for bad
/// input before anything changes (ctx.calls advances only once the plan stands).
PreparedGroup prepareGroup(const algo::Topology& topology, std::span<const algo::CollOp> group,
                           const ExecContext& ctx, const algo::Tuning& tuning = algo::Tuning::fromConfig());

/// Executes a prepared group on the calling thread; throws what execute() throws.
void runPrepared(const PreparedGroup& prepared, transport::Links& links, const ExecContext& ctx);

/// prepareGroup() then runPrepared(): blocks until this rank's part of every operation in the group is
/// done. Throws what those throw.
void runGroup(const algo::Topology& topology, std::span<const algo::CollOp> group, transport::Links& links,
              const ExecContext& ctx, const algo::Tuning& tuning = algo::Tuning::fromConfig());

}  // namespace hetccl::engine
