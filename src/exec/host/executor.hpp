// Executes one rank's Schedule over transport connections.
//
// Steps run as soon as their dependencies are done: sends and receives are posted per connection
// strictly in schedule order (the FIFO contract), many at a time; local steps (copy, reduce, scale,
// divide) run on the calling thread when ready; posted requests are polled with test().
#pragma once

#include <span>

#include "algo/schedule.hpp"
#include "exec/host/exec_context.hpp"
#include "transport/base/links.hpp"

namespace hetccl::engine {

/// Runs `schedule` to completion on the calling thread. Allocates Schedule::scratchBytes of host scratch.
/// Throws:
///  * TimeoutError naming the peer of the oldest unfinished request when nothing progressed for
///    ctx.timeoutMs;
///  * PeerError from a connection (a dead or misbehaving peer) or from ctx.checkFailure;
///  * AbortedError once *ctx.abortFlag is true;
///  * InternalError for a schedule that cannot make progress (a planner bug).
/// `stamps` (one per step, or empty for default stamps) is what each send carries and each receive
/// expects (call_stamps.hpp); a message with another stamp throws PeerError naming both calls.
/// After a throw, the connections used may hold half-transferred messages and must not be reused.
void execute(const algo::Schedule& schedule, transport::Links& links, const ExecContext& ctx,
             std::span<const transport::CallStamp> stamps = {});

}  // namespace hetccl::engine
