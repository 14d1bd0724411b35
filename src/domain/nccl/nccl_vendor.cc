#include "domain/nccl/nccl_vendor.hpp"

#include "bootstrap/bootstrap.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "domain/nccl/id_exchange.hpp"
#include "domain/nccl/library_search.hpp"
#include "domain/nccl/nccl_comm.hpp"

namespace hetccl::domain::nccl {

std::unique_ptr<DomainComm> NcclVendor::createComm(bootstrap::Bootstrap& bootstrap, const std::vector<int>& members,
                                                   const void* vendorConfig) {
  const int index = memberIndex(bootstrap, members);
  const int size = static_cast<int>(members.size());
  const NcclApi& api = lib_->api();
  if (vendorConfig && !api.commInitRankConfig)
    throw InvalidUsage(concat(lib_->describe(), " has no ncclCommInitRankConfig: a communicator config cannot be applied"));
  const std::string where = concat(lib_->flavor().name, " domain rank ", index, " of ", size, " (rank ",
                                   bootstrap.rank(), ")");

  abi::ncclUniqueId id = shareUniqueId(bootstrap, members, [&] {
    abi::ncclUniqueId created{};
    lib_->check(api.getUniqueId(&created), "ncclGetUniqueId", where);
    return created;
  });

  abi::ncclComm_t comm = nullptr;
  abi::ncclResult_t r;
  if (vendorConfig) {
    // NCCL takes a non-const pointer but only reads the config.
    auto* config = const_cast<abi::ncclConfig_t*>(static_cast<const abi::ncclConfig_t*>(vendorConfig));
    r = api.commInitRankConfig(&comm, size, id, index, config);
  } else {
    r = api.commInitRank(&comm, size, id, index);
  }
  if (r != abi::ncclSuccess && comm) api.commAbort(comm);  // e.g. ncclInProgress from a non-blocking config
  lib_->check(r, vendorConfig ? "ncclCommInitRankConfig" : "ncclCommInitRank", where);
  HETCCL_INFO(log::kInit, "created ", where, " with ", lib_->describe());
  return std::make_unique<NcclComm>(lib_, comm, index, size);
}

void NcclVendor::groupStart() { lib_->check(lib_->api().groupStart(), "ncclGroupStart"); }
void NcclVendor::groupEnd() { lib_->check(lib_->api().groupEnd(), "ncclGroupEnd"); }

NcclVendor& processVendor(const Flavor& flavor) {
  // Function-local statics: initialised once, thread-safely; an initialiser that throws is retried by the
  // next call. Never destroyed: communicators may outlive static destructors.
  if (std::string_view(flavor.name) == kRcclFlavor.name) {
    static NcclVendor* rccl = new NcclVendor(findLibrary(kRcclFlavor));
    return *rccl;
  }
  static NcclVendor* nccl = new NcclVendor(findLibrary(kNcclFlavor));
  return *nccl;
}

const Flavor* flavorFor(DeviceKind kind, const std::string& setting) {
  if (setting == "off") return nullptr;
  if (setting == "nccl") return &kNcclFlavor;
  if (setting == "rccl") return &kRcclFlavor;
  if (setting != "auto")
    throw InvalidArgument(concat("HETCCL_VENDOR_CCL='", setting, "' is not one of auto, off, nccl, rccl"));
  switch (kind) {
    case DeviceKind::Cuda:
      return &kNcclFlavor;
    case DeviceKind::Hip:
      return &kRcclFlavor;
    case DeviceKind::Host:
      break;
  }
  return nullptr;
}

std::unique_ptr<NcclVendor> openNccl(const std::string& path, const void* selfAddress) {
  return std::make_unique<NcclVendor>(NcclLibrary::open(kNcclFlavor, path, selfAddress));
}

}  // namespace hetccl::domain::nccl
