// Typed exceptions used everywhere inside hetccl. They never cross the C ABI: src/abi translates them
// once into a Result plus the thread's last-error string.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/result.hpp"

namespace hetccl {

/// Builds a string from any streamable pieces: concat("rank ", 3, " of ", 4).
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

/// Base of every hetccl exception: a result code and a message saying what and where.
class Error : public std::runtime_error {
 public:
  Error(Result code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Result code() const noexcept { return code_; }

 private:
  Result code_;
};

/// Bad argument from the caller (null pointer, bad count/type/op/root/peer). Nothing was changed.
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& what) : Error(Result::InvalidArgument, what) {}
};

/// Call not allowed in the current state or not supported by this build.
class InvalidUsage : public Error {
 public:
  explicit InvalidUsage(const std::string& what) : Error(Result::InvalidUsage, what) {}
};

/// Operating-system failure; the message carries errno's text.
class SystemError : public Error {
 public:
  explicit SystemError(const std::string& what) : Error(Result::SystemError, what) {}
  /// Builds "<what>: <strerror(err)>", plus the limit and what to do for EMFILE / ENFILE (too many open
  /// files), see fileLimitAdvice().
  static SystemError fromErrno(const std::string& what, int err);
};

/// For EMFILE: " (this process may open at most N files, RLIMIT_NOFILE ...): raise the limit ..."; for
/// ENFILE the system-wide advice; "" for any other errno.
std::string fileLimitAdvice(int err);

/// Bug or broken invariant inside hetccl.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what) : Error(Result::InternalError, what) {}
};

/// A peer failed: it died, closed its connection, sent garbage, or missed a deadline.
/// `peer` is its rank in the communicator (-1 when unknown), `host` its host id ("" when unknown).
class PeerError : public Error {
 public:
  PeerError(int peer, const std::string& host, const std::string& what)
      : Error(Result::RemoteError, what), peer_(peer), host_(host) {}
  int peer() const noexcept { return peer_; }
  const std::string& host() const noexcept { return host_; }

 private:
  int peer_;
  std::string host_;
};

/// A deadline passed while waiting (HETCCL_TIMEOUT). Reported as a remote error naming the peer waited on.
class TimeoutError : public PeerError {
 public:
  using PeerError::PeerError;
};

/// The communicator was aborted (hetcclCommAbort) while this call waited.
class AbortedError : public Error {
 public:
  explicit AbortedError(const std::string& what) : Error(Result::RemoteError, what) {}
};

}  // namespace hetccl
