// Completion bookkeeping of one tcp connection: which requests still have pieces in flight, and the
// failure (if any) that made the connection unusable. Shared by the connection and its socket workers.
#pragma once

#include <exception>
#include <mutex>
#include <unordered_map>

#include "transport/base/transport.hpp"

namespace hetccl::transport::tcp {

class RequestTracker {
 public:
  /// Registers the next request (numbers count from 1) with `pieces` pieces; 0 pieces = already done.
  Request issue(size_t pieces);
  /// One piece of `r` has moved; `r` completes with its last piece.
  void pieceDone(Request r);
  /// Records why the connection failed (the first failure wins); later done() calls rethrow it.
  void fail(std::exception_ptr failure);
  /// True once `r` has completed. Rethrows the recorded failure if there is one; throws
  /// InvalidArgument for a request that was never issued.
  bool done(Request r);
  /// Rethrows the recorded failure, if any.
  void rethrowIfFailed();

 private:
  std::mutex mutex_;
  Request lastIssued_ = 0;
  std::unordered_map<Request, size_t> piecesLeft_;  // open requests only
  std::exception_ptr failure_;
};

}  // namespace hetccl::transport::tcp
