// One interface for every way a communicator's calls run (src/exec). The path selector
// (comm/path_selector.hpp) picks the device executor at init; the communicator holds it and hands it every
// group whose buffers are device memory. Host-buffer groups run on the communicator's HostExecutor:
//
//   HostExecutor      (exec/host/host_executor.hpp)          host buffers: the host engine, to completion
//   VendorExecutor    (exec/vendor/vendor_executor.hpp)      single all-GPU domain: every call delegated to NCCL/RCCL
//   PipelineExecutor  (exec/pipeline/pipeline_executor.hpp)  GPU ranks of one host: the stream pipeline,
//                                                            optionally with a vendor communicator inside each domain
//   StagedExecutor    (exec/staged/staged_executor.hpp)      any other layout: staging through pinned host memory,
//                                                            the pieces run on the HostExecutor (DevicePath)
//
// Failures: an executor reports every failure that makes the communicator unusable to the FailureSink it
// was built with (the communicator's fail(), which makes it sticky) — whether it happens inside enqueue()
// (then also thrown) or later on a thread of its own. An error enqueue() throws without reporting it
// (a group the planner rejects, a refused graph capture) leaves the communicator usable.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>

#include "algo/coll_op.hpp"
#include "exec/base/exec_path.hpp"
#include "core/error.hpp"

namespace hetccl {

class DeviceExecutor {
 public:
  /// Told about a failure that makes the communicator unusable (any thread, at most once per failure).
  using FailureSink = std::function<void(const Error&)>;

  /// Waits (bounded by HETCCL_TIMEOUT) for queued work or releases it after a failure, then frees what
  /// the executor owns.
  virtual ~DeviceExecutor() = default;

  /// Queues a validated group of device-buffer operations on `stream` (nullptr: the default stream) with
  /// NCCL's semantics: returns once queued, the user's stream waits for the result. One calling thread
  /// at a time. Throws what went wrong (see the failure rules above).
  virtual void enqueue(std::span<const algo::CollOp> ops, void* stream) = 0;
  /// Waits until every group queued eagerly so far has finished on the device (or was released after a
  /// failure); TimeoutError after HETCCL_TIMEOUT. The communicator's finalize calls it.
  virtual void drain() = 0;
  /// The communicator is being aborted (its abort flag is already set, which the executor's own waits
  /// watch): aborts what does not watch it, i.e. vendor communicators. Any thread; never throws.
  virtual void abort() noexcept = 0;
  /// The asynchronous error a vendor communicator of this executor reports (naming its domain), if any;
  /// nullopt when there is none or no vendor communicator. Any thread, also while enqueue() or abort()
  /// run on others.
  virtual std::optional<Error> pollAsyncError() = 0;

  /// Which path this is.
  virtual ExecPath path() const noexcept = 0;
  /// Short name ("stream pipeline", ...): execPathName(path()).
  const char* name() const noexcept { return execPathName(path()); }
  /// One line for logs and hetccl-info, e.g. "NCCL 2.28.9 from ... (single domain: every device call
  /// delegated)".
  virtual std::string describe() const = 0;
};

/// Hands `e` to `sink`: an Error as it is, anything else as an InternalError with its text (the
/// components under the executors report std::exception).
inline void reportToSink(const DeviceExecutor::FailureSink& sink, const std::exception& e) {
  if (auto* err = dynamic_cast<const Error*>(&e)) return sink(*err);
  sink(InternalError(e.what()));
}

}  // namespace hetccl
