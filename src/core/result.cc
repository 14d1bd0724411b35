#include "core/result.hpp"

#include <sys/resource.h>

#include <cerrno>
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

std::string fileLimitAdvice(int err) {
  if (err == ENFILE) return " (the system-wide limit of open files is reached: raise fs.file-max, or close files)";
  if (err != EMFILE) return "";
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return " (raise the limit of open files per process: ulimit -n)";
  auto text = [](rlim_t v) { return v == RLIM_INFINITY ? std::string("unlimited") : concat(v); };
  return concat(" (this process may open at most ", text(lim.rlim_cur), " files, RLIMIT_NOFILE; hard limit ",
                text(lim.rlim_max), "): raise the limit, e.g. `ulimit -n 65536` in the launching shell or the ",
                "launcher's setting; hetccl needs a few descriptors per peer rank");
}

SystemError SystemError::fromErrno(const std::string& what, int err) {
  return SystemError(concat(what, ": ", std::strerror(err), fileLimitAdvice(err)));
}

}  // namespace hetccl
