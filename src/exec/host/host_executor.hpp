// The host engine behind the executor interface (exec/base/device_executor.hpp): a group whose buffers are
// host memory runs on the calling thread, to completion, over the communicator's connections (the stream is
// not used). The communicator runs every host-buffer group through it; the staged executor (exec/staged) runs
// its pieces through it from its progress thread.
//
// Per group: the call-agreement check when HETCCL_CHECK_CALLS is on (a group with a collective), the plan
// (from a cache of the last kPlanCacheEntries shapes, algo/plan_cache.hpp: training loops repeat the same
// calls on the same buffers), the messages' call stamps, then the engine (executor.hpp).
//
// Failures: a group the planner rejects throws InvalidArgument before anything moves and is not reported
// (the communicator stays usable). Anything else is reported to the FailureSink and thrown: a PeerError as
// the failure of the rank that failed first (bootstrap/root_cause.hpp), which the other ranks are told
// (Bootstrap::reportFailure). After a reported failure, and while *stickyError (the communicator's
// asynchronous error, when given) is set, every group is refused at once: the connections may hold half a
// message.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "algo/plan_cache.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "bootstrap/bootstrap.hpp"
#include "exec/base/device_executor.hpp"
#include "exec/host/exec_context.hpp"
#include "transport/base/links.hpp"

namespace hetccl::engine {

class HostExecutor final : public DeviceExecutor {
 public:
  /// Schedules of distinct recent groups kept for reuse.
  static constexpr size_t kPlanCacheEntries = 64;

  /// Everything is the communicator's and must outlive the executor; `ctx` and `links` are used as they
  /// are at each call. `stickyError` (may be null): non-zero once the communicator failed.
  HostExecutor(const algo::Topology& topology, const algo::Tuning& tuning, bootstrap::Bootstrap& boot,
               transport::Links& links, const ExecContext& ctx, bool checkCalls,
               const std::atomic<int>* stickyError, FailureSink onFailure);

  /// Runs `ops` (host buffers) to completion on the calling thread; `stream` is ignored. Two threads may
  /// call it (the communicator's caller and the staged executor's progress thread); the plan cache and the
  /// failure state are shared under a lock, the groups themselves are not serialised.
  void enqueue(std::span<const algo::CollOp> ops, void* stream) override;
  void drain() override {}
  /// Nothing to do: the engine's waits watch the abort flag (ExecContext::abortFlag).
  void abort() noexcept override {}
  std::optional<Error> pollAsyncError() override { return std::nullopt; }
  ExecPath path() const noexcept override { return ExecPath::HostOnly; }
  std::string describe() const override;

  /// Plan-cache counters (tests, hetccl-info).
  uint64_t planHits() const;
  uint64_t planMisses() const;

 private:
  void refuseWhenFailed() const;

  bootstrap::Bootstrap& boot_;
  transport::Links& links_;
  const ExecContext& ctx_;
  const bool checkCalls_;
  const std::atomic<int>* stickyError_;
  FailureSink onFailure_;
  mutable std::mutex mu_;  // guards plans_ and failure_
  algo::PlanCache plans_;
  std::optional<Error> failure_;  // the first failure this executor reported
};

}  // namespace hetccl::engine
