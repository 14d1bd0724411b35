// Plan a group of operations and execute it on the host engine, in one call.
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

/// Plans `group` (algo::plan), stamps its messages (call_stamps.hpp) and executes it on the calling thread:
/// blocks until this rank's part of every operation in the group is done. Throws plan()'s InvalidArgument
/// before anything moves, else what execute() throws. (The communicator runs its groups through
/// HostExecutor, host_executor.hpp, which caches plans and reports failures; this is the bare engine.)
void runGroup(const algo::Topology& topology, std::span<const algo::CollOp> group, transport::Links& links,
              const ExecContext& ctx, const algo::Tuning& tuning = algo::Tuning::fromConfig());

}  // namespace hetccl::engine
