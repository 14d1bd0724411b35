// The communicator's device executor: gathers what the path selector decides from (path_selector.hpp),
// asks every rank whether the vendor library loads when that matters, logs the decision with its reason
// and builds the executor (device_executor.hpp) on GPU ranks.
#include <memory>

#include "comm/communicator.hpp"
#include "comm/device_executor.hpp"
#include "comm/pipeline_executor.hpp"
#include "comm/staged_executor.hpp"
#include "comm/vendor_executor.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "domain/nccl/nccl_vendor.hpp"

namespace hetccl {

domain::VendorCcl* Communicator::probeVendor(PathFacts& facts) {
  domain::VendorCcl* vendor = nullptr;
  int32_t loaded = 1;
  try {
    vendor = &domain::nccl::processNccl();
    facts.vendorName = vendor->describe();
  } catch (const Error& e) {
    loaded = 0;
    facts.localVendorError = e.what();
  }
  // Every rank must take the same decision: a rank that cannot load the library tells the others.
  std::vector<int32_t> all(size());
  all[rank()] = loaded;
  boot_->allGather(all.data(), sizeof(int32_t));
  facts.vendorLoads.assign(all.begin(), all.end());
  if (facts.vendorName.empty()) facts.vendorName = "the vendor library";
  for (int32_t v : all)
    if (!v) return nullptr;
  return vendor;
}

void Communicator::setUpDeviceExecution() {
  PathFacts facts;
  facts.rank = rank();
  facts.peers = peers();
  facts.topology = topology_;
  facts.gpuExec = config().str("HETCCL_GPU_EXEC");
  facts.vendorCcl = config().str("HETCCL_VENDOR_CCL");
  domain::VendorCcl* vendor = vendorProbeNeeded(facts) ? probeVendor(facts) : nullptr;
  pathChoice_ = choosePath(facts);

  const std::string& domainName = peers()[rank()].domain;
  auto onFailure = [this](const Error& e) { fail(e); };
  const int device = peers()[rank()].deviceIndex;
  if (gpu_) {  // a CPU rank's calls never have device buffers: no executor
    switch (pathChoice_.path) {
      case ExecPath::HostOnly: break;
      case ExecPath::VendorDelegation:
        executor_ = std::make_unique<VendorExecutor>(*vendor, *boot_, domainName, onFailure);
        break;
      case ExecPath::PipelineWithDomainVendor:
      case ExecPath::Pipeline:
        executor_ = std::make_unique<PipelineExecutor>(
            *gpu_, device, *boot_, topology_, pathChoice_.path == ExecPath::PipelineWithDomainVendor ? vendor : nullptr,
            domainName, checkCalls_, &aborted_, onFailure);
        break;
      case ExecPath::Staged:
        executor_ = std::make_unique<StagedExecutor>(
            *gpu_, device, rank(), size(), [this](std::span<const algo::CollOp> staged) { runHost(staged); },
            &aborted_, onFailure);
        break;
    }
  }
  if (executor_) {
    devicePathName_ = executor_->describe();
  } else if (pathChoice_.path == ExecPath::HostOnly) {
    devicePathName_ = "none (no rank has a GPU)";
  } else {  // a CPU rank of a job with GPU ranks: say what its GPU peers run
    devicePathName_ = concat(execPathName(pathChoice_.path), " (on the GPU ranks; this rank has no GPU)");
  }
  if (pathChoice_.overrideNotHonoured)
    HETCCL_WARN(log::kInit, "rank ", rank(), ": device calls: ", devicePathName_, ": ", pathChoice_.reason);
  else
    HETCCL_INFO(log::kInit, "rank ", rank(), ": device calls: ", devicePathName_, ": ", pathChoice_.reason);
}

}  // namespace hetccl
