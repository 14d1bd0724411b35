#include "exec/host/run_group.hpp"

#include "algo/planner.hpp"
#include "core/log.hpp"
#include "exec/host/executor.hpp"

namespace hetccl::engine {

PreparedGroup prepareGroup(const algo::Topology& topology, std::span<const algo::CollOp> group,
                           const ExecContext& ctx, const algo::Tuning& tuning) {
  PreparedGroup p;
  p.schedule = algo::plan(topology, group, tuning);
  CallSequence local;  // no communicator counters: this group counts from zero
  p.stamps = stampGroup(p.schedule, group, topology.rank, tuning, ctx.calls ? *ctx.calls : local);
  HETCCL_TRACE(log::kEngine, "rank ", topology.rank, ": group of ", group.size(), " operations -> ",
               p.schedule.steps.size(), " steps, ", p.schedule.scratchBytes, " scratch bytes");
  return p;
}

void runPrepared(const PreparedGroup& prepared, transport::Links& links, const ExecContext& ctx) {
  execute(prepared.schedule, links, ctx, prepared.stamps);
}

void runGroup(const algo::Topology& topology, std::span<const algo::CollOp> group, transport::Links& links,
              const ExecContext& ctx, const algo::Tuning& tuning) {
  runPrepared(prepareGroup(topology, group, ctx, tuning), links, ctx);
}

}  // namespace hetccl::engine
