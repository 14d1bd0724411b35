// Device execution by the stream pipeline (src/exec/pipeline): GPU ranks, each group compiled into work on
// GPU streams over pinned rings, shared-memory rings between ranks of one host and, between hosts, rings
// mirrored over the network by the executor's ring proxy (its own transport connections, tcp or ucx as
// the communicator's links would choose). With a vendor library on every rank, each
// domain also gets a vendor communicator over its members, and the planner hands the phases inside a
// domain to it (algo::StepKind::DomainCollective): only the cross-domain share crosses the rings.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "algo/topology.hpp"
#include "bootstrap/bootstrap.hpp"
#include "exec/base/device_executor.hpp"
#include "transport/links/link_set.hpp"
#include "device/base/gpu_plugin.h"
#include "domain/base/vendor_ccl.hpp"
#include "exec/pipeline/stream_executor.hpp"

namespace hetccl {

class PipelineExecutor final : public DeviceExecutor {
 public:
  /// Collective over `boot` (every rank a GPU rank): builds the StreamExecutor (rings, streams, landing
  /// buffers on `device`) and, when some rank is on another host, the connections to every rank on
  /// another host over `transportSetting` (HETCCL_TRANSPORT / the config's netName, as transport::LinkSet takes it). `domainComm`, when given (every rank passes one or none),
  /// is this rank's vendor communicator over topology.membersOf(its domain), described by `vendorName`;
  /// the executor owns it. `checkCalls` (HETCCL_CHECK_CALLS): groups with a collective are compared
  /// between ranks before they are queued. `domainName` names this rank's domain in error messages.
  /// Failures of the stream executor, and errors of enqueue() other than InvalidArgument, are reported
  /// to `onFailure`.
  PipelineExecutor(const hetcclGpuPlugin_t& gpu, int device, bootstrap::Bootstrap& boot, const algo::Topology& topology,
                   std::unique_ptr<domain::DomainComm> domainComm, const std::string& vendorName,
                   std::string domainName, bool checkCalls, const std::string& transportSetting,
                   const std::atomic<bool>* abortFlag, FailureSink onFailure);
  /// Destroys the stream executor first (it drains or releases its streams), then the domain
  /// communicator (finalized unless abort() ran).
  ~PipelineExecutor() override;

  /// Throws InvalidArgument for a group the planner rejects (nothing queued; not reported), InvalidUsage
  /// from HETCCL_CHECK_CALLS for disagreeing calls (not reported), else what the stream executor throws.
  void enqueue(std::span<const algo::CollOp> ops, void* stream) override;
  void drain() override { exec_->drain(); }
  /// Aborts the domain communicator, if any (the stream executor watches the abort flag itself).
  void abort() noexcept override;
  std::optional<Error> pollAsyncError() override;
  ExecPath path() const noexcept override {
    return domainComm_ ? ExecPath::PipelineWithDomainVendor : ExecPath::Pipeline;
  }
  std::string describe() const override { return description_; }

 private:
  bootstrap::Bootstrap& boot_;
  const bool checkCalls_;
  FailureSink onFailure_;
  const std::string domainName_;
  std::string description_;
  std::unique_ptr<domain::DomainComm> domainComm_;  // declared before exec_: outlives it
  std::unique_ptr<transport::LinkSet> netLinks_;               // ranks on other hosts (the ring proxy's); outlives exec_
  std::unique_ptr<stream_exec::StreamExecutor> exec_;
};

}  // namespace hetccl
