// The communicator: one rank's membership in a job. Owns the bootstrap, the transport links, the device
// executor and the user-defined reduction operators; runs groups of host-buffer operations through the
// engine and hands device-buffer groups to its device executor; turns a peer failure into a sticky
// asynchronous error. Its methods live in one file per concept:
//   communicator.cc          lifecycle: create, set-up, finalize, abort
//   communicator_device.cc   the device executor: path selection (path_selector.hpp) and construction
//   communicator_run.cc      running groups: host engine or device executor
//   communicator_failure.cc  failure attribution, sticky and asynchronous errors
//   communicator_split.cc    split
//   communicator_ops.cc      user reduction operators (PreMulSum) and operator resolution
//   validate.cc              argument checks
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "bootstrap/bootstrap.hpp"
#include "bootstrap/crypto.hpp"
#include "comm/comm_extension.hpp"
#include "comm/path_selector.hpp"
#include "core/result.hpp"
#include "device/base/gpu_plugin.h"
#include "exec/host/exec_context.hpp"

namespace hetccl {

namespace transport {
class LinkSet;
}  // namespace transport
class DeviceExecutor;
namespace engine {
class HostExecutor;
}  // namespace engine
namespace domain {
class VendorCcl;
class DomainComm;
}

/// Options of hetcclConfig_t the communicator uses.
struct CommOptions {
  std::string transport;  ///< "", "shm", "tcp" (netName); "" = HETCCL_TRANSPORT
};

class Communicator {
 public:
  /// Joins the job described by `id` (collective over all ranks). Throws on failure.
  static std::unique_ptr<Communicator> create(const bootstrap::UniqueId& id, int nranks, int rank,
                                              const CommOptions& options);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return topology_.rank; }
  int size() const { return topology_.nranks; }
  int numDomains() const { return topology_.numDomains(); }
  const std::vector<PeerInfo>& peers() const { return boot_->peers(); }
  const algo::Topology& topology() const { return topology_; }
  std::string_view transportTo(int peer) const;
  /// How device-buffer calls run, in one line: "NCCL ... (single domain: every device call delegated)",
  /// the stream pipeline (with the vendor inside domains or not), "host staging ...", or "none ...".
  const std::string& devicePathName() const { return devicePathName_; }
  /// The path selector's decision for this communicator (the same on every rank) and its reason.
  const PathChoice& devicePathChoice() const { return pathChoice_; }
  /// The tuning host-buffer calls (and host staging) are planned with.
  const algo::Tuning& hostTuning() const { return tuning_; }

  /// Checks one operation against this communicator (root/peer range, buffers, counts that overflow,
  /// AllToAllv tables, user op handles). Throws InvalidArgument saying what is wrong; changes nothing.
  void validate(const algo::CollOp& op) const;
  /// Runs a group of operations (already validated). Host buffers: on the host engine, to completion
  /// before returning. Device buffers: handed to the device executor, ordered on `stream` and returning
  /// once queued. A peer failure or abort makes the communicator unusable: the error is kept
  /// (asyncError) and thrown again by later calls; a rejected group (InvalidArgument) changes nothing.
  void run(std::span<const algo::CollOp> ops, void* stream);

  /// Collective over this communicator: ranks with the same color form a new communicator ordered by
  /// (key, old rank). color < 0 (HETCCL_SPLIT_NOCOLOR) takes part but gets nullptr.
  std::unique_ptr<Communicator> split(int color, int key, const CommOptions& options);

  /// PreMulSum operators: returns the handle (>= kNumBuiltinOps) for `scalar` (one element of `type`).
  int createPreMulSum(DataType type, const void* scalar);
  void destroyOp(int handle);
  /// The engine's form of a reduction operator handle; throws InvalidArgument for unknown handles or a
  /// PreMulSum created for another type. Avg of an fp8 type becomes PreMulSum by 1/size() rounded to that
  /// type, as NCCL 2.28 computes it.
  ReduceOp resolveOp(int handle, DataType type) const;

  /// Waits for every rank to finish its work on this communicator (collective), then closes it for
  /// use. Skips the wait when the communicator already failed.
  void finalize();
  /// Makes every wait of this communicator fail promptly. Any thread, any time.
  void abort();
  /// Success, or the result of the failure that made this communicator unusable.
  Result asyncError() const { return static_cast<Result>(asyncError_.load()); }
  std::string asyncErrorMessage() const;
  /// asyncError() after first asking the vendor library (NCCL) of the domain communicator(s) the device
  /// executor owns for its asynchronous error: one it reports makes this communicator failed (sticky),
  /// with a message naming the domain. Any thread (the watchdog of GetAsyncError), also while a call
  /// runs or abort() does.
  Result pollAsyncError();
  /// Throws the sticky error (or InvalidUsage after finalize); see run().
  void checkUsable() const;

  // --- for services layered on the communicator (src/rma) ---
  /// The bootstrap of this communicator (collective exchanges of a service's set-up, failure()).
  bootstrap::Bootstrap& bootstrap() { return *boot_; }
  /// The abort flag every wait of the communicator watches (set by abort()).
  const std::atomic<bool>* abortFlag() const { return &aborted_; }
  /// The transport setting the links were chosen with ("", "auto", "shm", "tcp").
  const std::string& transportSetting() const { return transport_; }
  /// A key derived from the job's secret (never on the wire, never logged), the same on every rank of
  /// the job and in every communicator split from it: services authenticate what they hand out with it.
  const bootstrap::Secret& serviceKey() const { return serviceKey_; }
  /// The GPU plugin of this rank, or nullptr on a CPU rank.
  const hetcclGpuPlugin_t* gpuPlugin() const { return gpu_; }
  /// Attaches the RMA service (once; InvalidUsage when one is attached). Stopped by finalize() and the
  /// destructor, aborted by abort().
  void attachRma(std::shared_ptr<CommExtension> rma);
  /// The RMA service, or nullptr before hetcclRmaInit.
  std::shared_ptr<CommExtension> rma() const;
  /// How RMA reaches `peer` ("rma to rank 3: shm, ..."), or "" before hetcclRmaInit (hetccl-info --comm).
  std::string rmaPathTo(int peer) const;
  /// Makes `e` the communicator's asynchronous error (sticky, the first failure wins), as a failure of
  /// work already queued on a stream does: for services whose stream-ordered work fails (src/rma).
  void reportAsyncFailure(const Error& e) { fail(e); }

 private:
  Communicator(std::shared_ptr<bootstrap::Bootstrap> boot, const CommOptions& options,
               const hetcclGpuPlugin_t* gpu);
  /// The constructor's exchanges over the bootstrap (settings that must agree, links, device
  /// executor); a PeerError from them is reported to the other ranks by the constructor.
  void setUp(const CommOptions& options);
  /// Every rank (collective): chooses how device-buffer calls run (path_selector.hpp; the vendor
  /// library's availability is all-gathered when it matters), logs the choice and its reason at INFO
  /// (WARN when HETCCL_GPU_EXEC cannot be honoured), and creates the executor on GPU ranks — now,
  /// because its pinned allocations may synchronise the device, which must not happen inside a call.
  void setUpDeviceExecution();
  /// Tries to load the vendor library on this rank and all-gathers the answers into `facts`;
  /// returns the library where it loaded on every rank.
  domain::VendorCcl* probeVendor(PathFacts& facts);
  /// Every rank (collective): makes this rank's device current and creates its domain's vendor
  /// communicator (over topology_.membersOf(its domain); the domains create theirs at the same time,
  /// each id travels only between its members), then all-gathers whether every rank succeeded. Returns
  /// it, or nullptr with `failure` saying which ranks failed (and why, here) when any did: then no rank
  /// keeps one.
  std::unique_ptr<domain::DomainComm> createDomainVendorComm(domain::VendorCcl& vendor, std::string& failure);
  /// True when the group's buffers are device memory; throws InvalidArgument for a mix.
  bool isDeviceGroup(std::span<const algo::CollOp> ops) const;
  void fail(const Error& e);

  std::shared_ptr<bootstrap::Bootstrap> parentBoot_;  // declared first: destroyed last
  std::shared_ptr<bootstrap::Bootstrap> boot_;
  algo::Topology topology_;
  std::atomic<bool> aborted_{false};  // before links_: transports hold a pointer to it
  std::unique_ptr<transport::LinkSet> links_;
  engine::ScratchArena scratch_;
  engine::CallSequence calls_;  // the host messages' call stamp counters (exec/host/call_stamps.hpp)
  engine::ExecContext exec_;
  algo::Tuning tuning_;
  std::atomic<int> asyncError_{0};
  bool finalized_ = false;
  mutable std::mutex mu_;  // guards errorMessage_, userOps_
  std::string errorMessage_;
  struct UserOp {
    bool live = false;
    DataType type = DataType::Float32;
    ReduceOp op;
  };
  std::vector<UserOp> userOps_;
  uint32_t splitCount_ = 0;
  bool checkCalls_ = false;  // HETCCL_CHECK_CALLS
  const hetcclGpuPlugin_t* gpu_ = nullptr;  // loaded CUDA runtime plugin, when this rank has a GPU
  PathChoice pathChoice_;
  std::string devicePathName_;
  std::string transport_;           // the links' transport setting
  bootstrap::Secret serviceKey_{};  // derived from the job's secret (create(), inherited by split())
  std::shared_ptr<CommExtension> rma_;  // guarded by mu_; stopped before the members it uses go
  // Every host-buffer group (and the staged executor's pieces) runs through it; it uses the links, exec_,
  // tuning_ and asyncError_ above, so it is declared after them.
  std::unique_ptr<engine::HostExecutor> hostExec_;
  // Declared last: destroyed first, while the host executor, the links and the bootstrap its work uses still
  // exist. Null on CPU ranks (their calls never have device buffers).
  std::unique_ptr<DeviceExecutor> executor_;
};

}  // namespace hetccl
