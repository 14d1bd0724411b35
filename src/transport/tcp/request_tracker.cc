#include "transport/tcp/request_tracker.hpp"

#include "core/error.hpp"

namespace hetccl::transport::tcp {

Request RequestTracker::issue(size_t pieces) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++lastIssued_;
  if (pieces > 0) piecesLeft_.emplace(lastIssued_, pieces);
  return lastIssued_;
}

void RequestTracker::pieceDone(Request r) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = piecesLeft_.find(r);
  if (it != piecesLeft_.end() && --it->second == 0) piecesLeft_.erase(it);
}

void RequestTracker::fail(std::exception_ptr failure) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_) failure_ = std::move(failure);
}

bool RequestTracker::done(Request r) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  if (r == 0 || r > lastIssued_)
    throw InvalidArgument(concat("tcp: test() of request ", r, " which was never issued (last issued: ", lastIssued_, ")"));
  return piecesLeft_.find(r) == piecesLeft_.end();
}

void RequestTracker::rethrowIfFailed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

}  // namespace hetccl::transport::tcp
