// Device execution by delegation: a communicator whose ranks are all GPU ranks of one domain hands every
// device-buffer group to the domain's vendor library (NCCL/RCCL) on the caller's stream, through one
// vendor communicator over all its ranks (vendor_route.hpp translates the calls).
#pragma once

#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "exec/base/device_executor.hpp"
#include "device/base/gpu_plugin.h"
#include "domain/base/vendor_ccl.hpp"

namespace hetccl {

class VendorExecutor final : public DeviceExecutor {
 public:
  /// Collective over `boot`: creates the vendor communicator over every rank, in rank order, bound to
  /// the caller's current device. `domain` names the hetccl domain in error messages. Every error of
  /// enqueue() is reported to `onFailure` (the vendor may have queued part of the group). `gpu` is the
  /// rank's plugin (a one-rank communicator's PreMulSum runs on it, vendor_route.hpp).
  VendorExecutor(domain::VendorCcl& vendor, const hetcclGpuPlugin_t& gpu, bootstrap::Bootstrap& boot,
                 std::string domain, FailureSink onFailure);
  /// Destroys the vendor communicator (it finalizes unless aborted).
  ~VendorExecutor() override = default;

  void enqueue(std::span<const algo::CollOp> ops, void* stream) override;
  /// Nothing to wait for here: the vendor's work is on the user's streams (its destructor finalizes).
  void drain() override {}
  /// Aborts the vendor communicator (ncclCommAbort).
  void abort() noexcept override { comm_->abort(); }
  std::optional<Error> pollAsyncError() override;
  ExecPath path() const noexcept override { return ExecPath::VendorDelegation; }
  std::string describe() const override;

 private:
  domain::VendorCcl& vendor_;
  const hetcclGpuPlugin_t& gpu_;
  std::unique_ptr<domain::DomainComm> comm_;
  const std::string domain_;
  FailureSink onFailure_;
};

}  // namespace hetccl
