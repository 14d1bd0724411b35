// Failure attribution and asynchronous errors: the first failure makes the communicator unusable
// (sticky, with its message), a peer failure is attributed to the rank that failed first, and the
// device executor's vendor communicators are asked for their asynchronous errors.
#include <chrono>
#include <thread>

#include "comm/communicator.hpp"
#include "exec/base/device_executor.hpp"
#include "core/log.hpp"

namespace hetccl {

void Communicator::fail(const Error& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (errorMessage_.empty()) errorMessage_ = e.what();
  }
  int expected = 0;
  asyncError_.compare_exchange_strong(expected, static_cast<int>(e.code()));
  HETCCL_WARN(log::kColl, "rank ", rank(), ": ", e.what());
}

PeerError Communicator::rootCause(const PeerError& seen) const {
  // When a rank dies, the survivor that notices first gives up and closes its own connections, so
  // other survivors may first see *that* survivor go away. The bootstrap mesh notices every closed
  // peer; the first one it saw is the real cause. Give its reader thread a moment to catch up.
  const auto until = Clock::now() + std::chrono::milliseconds(300);
  // Ranks of a split's other group count too: members may fail because one of them died.
  std::optional<PeerError> first = boot_->firstFailureInJob();
  while (!first && !aborted_.load() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    first = boot_->firstFailureInJob();
  }
  if (!first || first->peer() == seen.peer()) return seen;
  return PeerError(first->peer(), first->host(), concat(first->what(), " (seen here as: ", seen.what(), ")"));
}

std::string Communicator::asyncErrorMessage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errorMessage_;
}

Result Communicator::pollAsyncError() {
  if (executor_ && asyncError() == Result::Success && !aborted_.load()) {
    std::optional<Error> e = executor_->pollAsyncError();
    if (e && !aborted_.load()) fail(*e);  // after abort() the vendor communicator is gone: not its error
  }
  return asyncError();
}

}  // namespace hetccl
