// Failure attribution and asynchronous errors: the first failure makes the communicator unusable
// (sticky, with its message), a peer failure is attributed to the rank that failed first, and the
// device executor's vendor communicators are asked for their asynchronous errors.
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
