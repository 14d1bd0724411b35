#include "exec/vendor/vendor_executor.hpp"

#include <vector>

#include "exec/vendor/vendor_route.hpp"

namespace hetccl {
namespace {

std::vector<int> everyRank(const bootstrap::Bootstrap& boot) {
  std::vector<int> members(boot.size());
  for (int r = 0; r < boot.size(); ++r) members[r] = r;
  return members;
}

}  // namespace

VendorExecutor::VendorExecutor(domain::VendorCcl& vendor, const hetcclGpuPlugin_t& gpu, bootstrap::Bootstrap& boot,
                               std::string domain, FailureSink onFailure)
    : vendor_(vendor),
      gpu_(gpu),
      comm_(vendor.createComm(boot, everyRank(boot))),
      domain_(std::move(domain)),
      onFailure_(std::move(onFailure)) {}

void VendorExecutor::enqueue(std::span<const algo::CollOp> ops, void* stream) {
  try {
    runOnVendor(*comm_, ops, stream, &gpu_);
  } catch (const Error& e) {
    onFailure_(e);
    throw;
  }
}

std::optional<Error> VendorExecutor::pollAsyncError() { return vendorAsyncError(*comm_, domain_); }

std::string VendorExecutor::describe() const {
  return concat(vendor_.describe(), " (single domain: every device call delegated)");
}

}  // namespace hetccl
