// What an ncclComm_t of the drop-in points to: a hetccl communicator plus the NCCL-side state hetccl's C
// API has no place for: blocking mode, an init/split/finalize running in the background
// (non-blocking communicators, or issued inside a group), and buffer registrations.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "hetccl/hetccl.h"
#include "nccl_abi/background_op.hpp"
#include "nccl_abi/nccl_config.hpp"

namespace hetccl::nccl_abi {
/// What an ncclCommRegister handle points to.
struct RegisteredBuffer {
  void* buff = nullptr;
  size_t size = 0;
};
}  // namespace hetccl::nccl_abi

struct ncclComm {
  static constexpr uint64_t kLive = 0x68657463636c4e43ull;  // "hetcclNC"
  static constexpr uint64_t kDead = 0x646561642d636f6dull;  // "dead-com"

  std::atomic<uint64_t> magic{kLive};
  hetccl::nccl_abi::CommSettings settings;  ///< from ncclConfig_t (inherited by splits without config)
  std::atomic<hetcclComm_t> inner{nullptr};
  std::atomic<bool> busy{false};  ///< a background operation is attached to `op`
  std::atomic<int> failure{0};    ///< hetcclResult_t of a failed background operation; 0: none
  std::mutex mu;                  ///< guards op, failureMessage, registrations
  std::unique_ptr<hetccl::nccl_abi::BackgroundOp> op;
  std::string failureMessage;
  std::set<hetccl::nccl_abi::RegisteredBuffer*> registrations;  ///< live ncclCommRegister handles
};

namespace hetccl::nccl_abi {

/// A new live handle without hetccl communicator yet.
ncclComm* newHandle(const CommSettings& settings);

/// Attaches a background operation (init, split, finalize) to `c`; at most one at a time.
void attach(ncclComm* c, std::unique_ptr<BackgroundOp> op);

/// State of `c` as ncclCommGetAsyncError reports it before hetccl's own asynchronous error: collects a
/// finished background operation (installs the communicator it produced, or records its failure) and
/// returns hetcclInProgress while one still runs, the failure's code after one failed, else hetcclSuccess.
/// Any thread.
hetcclResult_t pollState(ncclComm* c);

/// Waits for the background operation of `c`, if any, and collects it (as pollState).
void waitIdle(ncclComm* c);

/// Throws InvalidArgument for a null handle and InvalidUsage for one that is not live (destroyed, aborted,
/// or not from this library).
void checkLive(const ncclComm* c);

/// Marks `c` dead for destroy or abort: throws as checkLive(), also when another thread's destroy or
/// abort claimed it first. Exactly one caller succeeds per handle.
void claim(ncclComm* c);

/// Keeps a dead handle allocated (reachable, never freed) so that calls racing with its destroy or abort
/// read a dead magic instead of freed memory. Costs sizeof(ncclComm) per destroyed communicator.
void bury(ncclComm* c);

/// The hetccl communicator of a handle that is ready for calls: throws as checkLive, InvalidArgument while
/// a background operation still runs (as NCCL: "use before the previous operation returned ncclSuccess"),
/// and the recorded error after one failed.
hetcclComm_t ready(ncclComm* c);

/// Starts hetcclCommFinalize of `c` on a background thread (after any operation still attached to it).
/// Throws as ready().
void startFinalize(ncclComm* c);

/// The failure message recorded for `c` by a background operation ("" when none).
std::string failureMessage(ncclComm* c);

}  // namespace hetccl::nccl_abi
