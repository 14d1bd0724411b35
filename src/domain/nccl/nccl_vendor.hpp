// VendorCcl over a dlopened NCCL (or RCCL): domain communicators created through hetccl's bootstrap,
// group calls, and the process-wide instance.
#pragma once

#include <memory>
#include <string>

#include "core/peer_info.hpp"
#include "domain/base/vendor_ccl.hpp"
#include "domain/nccl/nccl_library.hpp"

namespace hetccl::domain::nccl {

class NcclVendor final : public VendorCcl {
 public:
  explicit NcclVendor(std::shared_ptr<const NcclLibrary> lib) : lib_(std::move(lib)) {}

  std::string describe() const override { return lib_->describe(); }
  int version() const noexcept override { return lib_->versionCode(); }
  /// members[0] calls ncclGetUniqueId, the id travels over the bootstrap (id_exchange.hpp), then every
  /// member calls ncclCommInitRank (or ncclCommInitRankConfig with vendorConfig) with its index in
  /// `members`.
  std::unique_ptr<DomainComm> createComm(bootstrap::Bootstrap& bootstrap, const std::vector<int>& members,
                                         const void* vendorConfig = nullptr) override;
  void groupStart() override;
  void groupEnd() override;

  const NcclLibrary& library() const noexcept { return *lib_; }

 private:
  std::shared_ptr<const NcclLibrary> lib_;
};

/// The process's library of `flavor` (kNcclFlavor or kRcclFlavor): found once (library_search.hpp: the
/// flavor's variable, then the search) and kept for the life of the process. Thread-safe. A failed search
/// throws and is retried by the next call.
NcclVendor& processVendor(const Flavor& flavor);
inline NcclVendor& processNccl() { return processVendor(kNcclFlavor); }

/// The flavour serving a domain of `kind` devices under HETCCL_VENDOR_CCL=`setting`: auto -> NCCL for
/// cuda, RCCL for hip; nccl / rccl -> that flavour whatever the device (the RCCL adaptor runs against an
/// NCCL renamed as RCCL on NVIDIA machines). nullptr for "off" and for host ranks. Throws InvalidArgument
/// for another setting.
const Flavor* flavorFor(DeviceKind kind, const std::string& setting);

/// A vendor over the library at `path` (tests and tools; not cached). `selfAddress` as in
/// NcclLibrary::open.
std::unique_ptr<NcclVendor> openNccl(const std::string& path, const void* selfAddress = nullptr);

}  // namespace hetccl::domain::nccl
