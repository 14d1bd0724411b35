#include "exec/host/host_executor.hpp"

#include <vector>

#include "bootstrap/root_cause.hpp"
#include "exec/base/call_check.hpp"
#include "exec/host/call_stamps.hpp"
#include "exec/host/executor.hpp"

namespace hetccl::engine {

HostExecutor::HostExecutor(const algo::Topology& topology, const algo::Tuning& tuning, bootstrap::Bootstrap& boot,
                           transport::Links& links, const ExecContext& ctx, bool checkCalls,
                           const std::atomic<int>* stickyError, FailureSink onFailure)
    : boot_(boot),
      links_(links),
      ctx_(ctx),
      checkCalls_(checkCalls),
      stickyError_(stickyError),
      onFailure_(std::move(onFailure)),
      plans_(topology, tuning, kPlanCacheEntries) {}

void HostExecutor::refuseWhenFailed() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_) throw Error(failure_->code(), concat("the host engine failed earlier: ", failure_->what()));
  if (stickyError_ && stickyError_->load() != 0)
    throw Error(static_cast<Result>(stickyError_->load()), "the communicator failed earlier");
}

void HostExecutor::enqueue(std::span<const algo::CollOp> ops, void*) {
  refuseWhenFailed();
  // Point-to-point alone is checked per pair by the call stamps; an all-rank exchange would need every rank.
  if (checkCalls_ && hasCollective(ops)) checkCallsAgree(boot_, ops);  // before anything moves
  // Bad input (the planner's InvalidArgument) is thrown here, before anything moves: nothing is reported.
  std::shared_ptr<const algo::Schedule> schedule;
  std::vector<transport::CallStamp> stamps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    schedule = plans_.get(ops);
    CallSequence local;  // no communicator counters: this group counts from zero
    stamps = stampGroup(*schedule, ops, plans_.topology().rank, plans_.tuning(), ctx_.calls ? *ctx_.calls : local);
  }
  auto report = [&](const Error& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failure_) failure_ = e;
    }
    onFailure_(e);
  };
  try {
    execute(*schedule, links_, ctx_, stamps);
  } catch (const PeerError& e) {
    PeerError cause = bootstrap::rootCause(boot_, e, ctx_.abortFlag);
    report(cause);
    boot_.reportFailure(cause);  // ranks that see this one leave next name the cause, not this rank
    throw cause;
  } catch (const Error& e) {
    report(e);
    throw;
  } catch (const std::exception& e) {
    InternalError wrapped(concat("rank ", plans_.topology().rank, ": ", e.what()));
    report(wrapped);
    throw wrapped;
  }
}

std::string HostExecutor::describe() const {
  return concat("host engine (", kPlanCacheEntries, " plans cached)");
}

uint64_t HostExecutor::planHits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.hits();
}

uint64_t HostExecutor::planMisses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.misses();
}

}  // namespace hetccl::engine
