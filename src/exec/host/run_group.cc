#include "exec/host/run_group.hpp"

#include "algo/planner.hpp"
#include "core/log.hpp"
#include "exec/host/call_stamps.hpp"
#include "exec/host/executor.hpp"

namespace hetccl::engine {

void runGroup(const algo::Topology& topology, std::span<const algo::CollOp> group, transport::Links& links,
              const ExecContext& ctx, const algo::Tuning& tuning) {
  const algo::Schedule schedule = algo::plan(topology, group, tuning);
  CallSequence local;  // no communicator counters: this group counts from zero
  const std::vector<transport::CallStamp> stamps =
      stampGroup(schedule, group, topology.rank, tuning, ctx.calls ? *ctx.calls : local);
  HETCCL_TRACE(log::kEngine, "rank ", topology.rank, ": group of ", group.size(), " operations -> ",
               schedule.steps.size(), " steps, ", schedule.scratchBytes, " scratch bytes");
  execute(schedule, links, ctx, stamps);
}

}  // namespace hetccl::engine
