// The communicator's device executor: gathers what the path selector decides from (path_selector.hpp),
// asks every rank whether the vendor library loads when that matters, logs the decision with its reason
// and builds the executor (device_executor.hpp) on GPU ranks.
#include <memory>

#include "comm/communicator.hpp"
#include "exec/base/device_executor.hpp"
#include "exec/pipeline/pipeline_executor.hpp"
#include "exec/host/host_executor.hpp"
#include "exec/staged/staged_executor.hpp"
#include "exec/vendor/vendor_executor.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "domain/nccl/nccl_vendor.hpp"

namespace hetccl {

domain::VendorCcl* Communicator::probeVendor(PathFacts& facts) {
  domain::VendorCcl* vendor = nullptr;
  int32_t loaded = 1;
  try {  // the flavour of this rank's device: NCCL for cuda, RCCL for hip (or as HETCCL_VENDOR_CCL forces)
    const domain::nccl::Flavor* flavor = domain::nccl::flavorFor(peers()[rank()].deviceKind, facts.vendorCcl);
    if (!flavor) throw InvalidUsage(concat("no vendor library serves ", deviceKindName(peers()[rank()].deviceKind), " ranks"));
    vendor = &domain::nccl::processVendor(*flavor);
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

std::unique_ptr<domain::DomainComm> Communicator::createDomainVendorComm(domain::VendorCcl& vendor,
                                                                         std::string& failure) {
  std::unique_ptr<domain::DomainComm> comm;
  int32_t created = 1;
  std::string why;
  try {
    if (gpu_->setDevice(peers()[rank()].deviceIndex) != HETCCL_GPU_OK)  // the vendor binds to the current device
      throw Error(Result::UnhandledCudaError, concat(gpu_->name, " setDevice: ", gpu_->lastError()));
    comm = vendor.createComm(*boot_, topology_.membersOf(topology_.domainOf[rank()]));
  } catch (const Error& e) {
    // Also a PeerError from a member that failed to make the id: a rank really gone fails the all-gather.
    created = 0;
    why = e.what();
  }
  std::vector<int32_t> all(size());
  all[rank()] = created;
  boot_->allGather(all.data(), sizeof(int32_t));
  std::vector<int> failed;
  for (int r = 0; r < size(); ++r)
    if (!all[r]) failed.push_back(r);
  if (failed.empty()) return comm;
  if (comm) comm->abort();  // never finalized with members that may not have one
  std::string ranks;
  for (size_t i = 0; i < failed.size(); ++i) ranks += concat(i ? ", " : "", failed[i]);
  failure = concat("the vendor communicator of a domain could not be created on ",
                   failed.size() == 1 ? "rank " : "ranks ", ranks, why.empty() ? "" : concat(" (here: ", why, ")"));
  return nullptr;
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
      case ExecPath::HostOnly:
        break;
      case ExecPath::VendorDelegation:
        executor_ = std::make_unique<VendorExecutor>(*vendor, *gpu_, *boot_, domainName, onFailure);
        break;
      case ExecPath::PipelineWithDomainVendor:
      case ExecPath::Pipeline: {
        std::unique_ptr<domain::DomainComm> domainComm;
        if (pathChoice_.path == ExecPath::PipelineWithDomainVendor) {
          std::string failure;
          domainComm = createDomainVendorComm(*vendor, failure);
          if (!domainComm) pathChoice_ = withoutDomainVendor(pathChoice_, failure);
        }
        executor_ = std::make_unique<PipelineExecutor>(*gpu_, device, *boot_, topology_, std::move(domainComm),
                                                       facts.vendorName, domainName, checkCalls_, transport_,
                                                       &aborted_, onFailure);
        break;
      }
      case ExecPath::Staged:
        executor_ = std::make_unique<StagedExecutor>(*gpu_, device, rank(), size(), *hostExec_, &aborted_, onFailure);
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
  if (pathChoice_.warn)
    HETCCL_WARN(log::kInit, "rank ", rank(), ": device calls: ", devicePathName_, ": ", pathChoice_.reason);
  else
    HETCCL_INFO(log::kInit, "rank ", rank(), ": device calls: ", devicePathName_, ": ", pathChoice_.reason);
}

}  // namespace hetccl
