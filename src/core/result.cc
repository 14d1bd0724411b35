#include "core/result.hpp"

#include <cstring>

#include "core/error.hpp"

namespace hetccl {

const char* resultString(Result r) noexcept {
  switch (r) {
    case Result::Success: return "no error";
    case Result::UnhandledCudaError: return "unhandled device runtime failure";
    case Result::SystemError: return "unhandled system error (run with HETCCL_DEBUG=INFO for details)";
    case Result::InternalError: return "internal error - please report this issue to the hetccl developers";
    case Result::InvalidArgument: return "invalid argument (run with HETCCL_DEBUG=WARN for details)";
    case Result::InvalidUsage: return "invalid usage (run with HETCCL_DEBUG=WARN for details)";
    case Result::RemoteError: return "remote process exited or there was a network error";
    case Result::InProgress: return "operation in progress";
  }
  return "unknown result code";
}

SystemError SystemError::fromErrno(const std::string& what, int err) {
  return SystemError(concat(what, ": ", std::strerror(err)));
}

}  // namespace hetccl
