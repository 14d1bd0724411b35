#include "exec/pipeline/pipeline_executor.hpp"

#include "exec/base/call_check.hpp"
#include "exec/vendor/vendor_route.hpp"

namespace hetccl {

PipelineExecutor::PipelineExecutor(const hetcclGpuPlugin_t& gpu, int device, bootstrap::Bootstrap& boot,
                                   const algo::Topology& topology, std::unique_ptr<domain::DomainComm> domainComm,
                                   const std::string& vendorName, std::string domainName, bool checkCalls,
                                   const std::string& transportSetting, const std::atomic<bool>* abortFlag,
                                   FailureSink onFailure)
    : boot_(boot),
      checkCalls_(checkCalls),
      onFailure_(std::move(onFailure)),
      domainName_(std::move(domainName)),
      description_(stream_exec::StreamExecutor::describe()),
      domainComm_(std::move(domainComm)) {
  if (domainComm_) description_ += concat(" + ", vendorName, " inside each domain");
  const auto& peers = boot.peers();
  int otherHosts = 0;
  for (const PeerInfo& p : peers) otherHosts += p.hostId != peers[boot.rank()].hostId ? 1 : 0;
  try {
    if (otherHosts > 0) {
      netLinks_ = std::make_unique<transport::LinkSet>(boot, transportSetting, abortFlag, Deadline::fromConfig(), transport::LinkScope::OtherHosts);
      std::string via;
      for (int p = 0; p < boot.size(); ++p)
        if (peers[p].hostId != peers[boot.rank()].hostId && via.find(netLinks_->transportTo(p)) == std::string::npos)
          via += concat(via.empty() ? "" : "/", netLinks_->transportTo(p));
      description_ += concat("; rings to ", otherHosts, " ranks on other hosts mirrored over ", via);
    }
    exec_ = std::make_unique<stream_exec::StreamExecutor>(
        gpu, device, boot, topology, [this](const std::exception& e) { reportToSink(onFailure_, e); },
        [b = &boot] {
          if (auto f = b->failure()) throw *f;
        },
        abortFlag, domainComm_.get(), netLinks_.get());
  } catch (...) {
    if (netLinks_) netLinks_->closeAbruptly();
    if (domainComm_) domainComm_->abort();  // the other members may be gone: never wait for them
    throw;
  }
}

PipelineExecutor::~PipelineExecutor() {
  exec_.reset();
  netLinks_.reset();
}

void PipelineExecutor::enqueue(std::span<const algo::CollOp> ops, void* stream) {
  // Before anything is queued: a disagreement leaves the communicator usable.
  if (checkCalls_ && hasCollective(ops)) checkCallsAgree(boot_, ops);
  try {
    exec_->enqueue(ops, stream);
  } catch (const InvalidArgument&) {
    throw;  // rejected by the planner: nothing queued
  } catch (const Error& e) {
    onFailure_(e);
    throw;
  }
}

void PipelineExecutor::abort() noexcept {
  if (domainComm_) domainComm_->abort();
}

std::optional<Error> PipelineExecutor::pollAsyncError() {
  if (!domainComm_) return std::nullopt;
  return vendorAsyncError(*domainComm_, domainName_);
}

}  // namespace hetccl
