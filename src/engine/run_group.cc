#include "engine/run_group.hpp"

#include "algo/planner.hpp"
#include "core/log.hpp"
#include "engine/executor.hpp"

namespace hetccl::engine {

void runGroup(const algo::Topology& topology, std::span<const algo::CollOp> group, Links& links,
              const ExecContext& ctx, const algo::Tuning& tuning) {
  const algo::Schedule schedule = algo::plan(topology, group, tuning);
  HETCCL_TRACE(log::kEngine, "rank ", topology.rank, ": group of ", group.size(), " operations -> ",
               schedule.steps.size(), " steps, ", schedule.scratchBytes, " scratch bytes");
  execute(schedule, links, ctx);
}

}  // namespace hetccl::engine
