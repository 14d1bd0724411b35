// The communicator: one rank's membership in a job. Owns the bootstrap, the transport links and the
// user-defined reduction operators, runs groups of operations through the engine, and turns a peer
// failure into a sticky asynchronous error.
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
#include "core/result.hpp"
#include "device/base/gpu_plugin.h"
#include "domain/base/vendor_ccl.hpp"
#include "engine/exec_context.hpp"

namespace hetccl {

class LinkSet;
class DevicePath;
namespace stream_exec {
class StreamExecutor;
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
  /// How device-buffer calls run: "NCCL ... (single domain)", the stream pipeline, or "host staging".
  const std::string& devicePathName() const { return devicePathName_; }

  /// Checks one operation against this communicator (root/peer range, buffers, counts that overflow,
  /// AllToAllv tables, user op handles). Throws InvalidArgument saying what is wrong; changes nothing.
  void validate(const algo::CollOp& op) const;
  /// Runs a group of operations (already validated). Host buffers: to completion before returning.
  /// Device buffers: ordered on `stream` and returning at once (DevicePath). A peer failure or abort
  /// makes the communicator unusable: the error is kept (asyncError) and thrown again by later calls.
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
  /// asyncError() after first asking the vendor library (NCCL) of the domain communicator this rank owns
  /// for its asynchronous error: one it reports makes this communicator failed (sticky), with a message
  /// naming the domain. Any thread (the watchdog of GetAsyncError), also while a call runs or abort() does.
  Result pollAsyncError();

 private:
  Communicator(std::shared_ptr<bootstrap::Bootstrap> boot, const CommOptions& options,
               const hetcclGpuPlugin_t* gpu);
  /// The constructor's exchanges over the bootstrap (settings that must agree, links, vendor domain,
  /// device path); a PeerError from them is reported to the other ranks by the constructor.
  void setUp(const CommOptions& options);
  void checkUsable() const;
  void runHost(std::span<const algo::CollOp> ops);
  /// Single all-GPU domain: creates the vendor communicator every device call is delegated to
  /// (logged at INFO either way: no silent fallback).
  void setUpVendorDomain();
  /// Every rank (collective when any rank has a GPU and calls are not delegated): GPU ranks get the
  /// stream pipeline when every rank is a GPU rank on one host and HETCCL_GPU_EXEC allows it, else
  /// host staging (DevicePath).
  void createDevicePath();
  /// True when the group's buffers are device memory; throws InvalidArgument for a mix.
  bool isDeviceGroup(std::span<const algo::CollOp> ops) const;
  void fail(const Error& e);
  /// The peer failure to report for `seen`: the first failure the bootstrap noticed, when it differs.
  PeerError rootCause(const PeerError& seen) const;

  std::shared_ptr<bootstrap::Bootstrap> parentBoot_;  // declared first: destroyed last
  std::shared_ptr<bootstrap::Bootstrap> boot_;
  algo::Topology topology_;
  std::atomic<bool> aborted_{false};  // before links_: transports hold a pointer to it
  std::unique_ptr<LinkSet> links_;
  engine::ScratchArena scratch_;
  engine::CallSequence calls_;  // the host messages' call stamp counters (engine/call_stamps.hpp)
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
  std::unique_ptr<DevicePath> devicePath_;      // host staging of device calls, or...
  std::unique_ptr<stream_exec::StreamExecutor> streamExec_;  // ...the stream pipeline (GPU ranks of one host)
  domain::VendorCcl* vendor_ = nullptr;         // single all-GPU domain: its vendor library...
  std::unique_ptr<domain::DomainComm> vendorComm_;  // ...and communicator over every rank
  std::string devicePathName_ = "host staging";
};

}  // namespace hetccl
