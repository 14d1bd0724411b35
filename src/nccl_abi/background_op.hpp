// One communicator operation (init, split, finalize) run on its own thread, for non-blocking
// communicators and for operations issued inside ncclGroupStart/ncclGroupEnd. The thread binds the
// device that was current in the caller (NCCL binds a communicator to the caller's current device).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "hetccl/hetccl.h"

namespace hetccl::nccl_abi {

/// What a background operation produced: its result, the last-error text when it failed, and (init,
/// split) the new hetccl communicator.
struct OpOutcome {
  hetcclResult_t result = hetcclSuccess;
  std::string message;
  hetcclComm_t produced = nullptr;
};

class BackgroundOp {
 public:
  using Body = std::function<OpOutcome()>;

  /// Starts `body` on a new thread that first makes `device` current (when >= 0 and a GPU plugin is
  /// loaded). Throws SystemError when no thread can be started.
  static std::unique_ptr<BackgroundOp> start(Body body, int device);
  /// Joins the thread unless abandon() ran.
  ~BackgroundOp();
  BackgroundOp(const BackgroundOp&) = delete;
  BackgroundOp& operator=(const BackgroundOp&) = delete;

  /// True once the body returned. Any thread.
  bool finished() const noexcept;
  /// Waits for the body and returns what it produced (ownership of `produced` passes to the caller).
  OpOutcome wait();
  /// Lets the operation finish on its own: the thread is detached and a communicator it produces is
  /// aborted when it finishes. For ncclCommAbort of a communicator still initialising.
  void abandon() noexcept;

 private:
  struct Shared;
  explicit BackgroundOp(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

/// The device current on the calling thread, or -1 when this process has no GPU rank (HETCCL_DEVICE=host
/// or no CUDA plugin).
int currentDevice() noexcept;

}  // namespace hetccl::nccl_abi
