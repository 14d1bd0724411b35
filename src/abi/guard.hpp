// The one place exceptions become result codes: every extern "C" entry point runs its body through
// guarded(), which records the message as the thread's last error.
#pragma once

#include <atomic>
#include <memory>
#include <new>
#include <string>

#include "abi/comm_registry.hpp"
#include "comm/communicator.hpp"
#include "comm/group.hpp"
#include "core/error.hpp"
#include "hetccl/hetccl.h"

namespace hetccl::abi {

/// Records `message` as this thread's last error (hetcclGetLastError).
void setLastError(const std::string& message);
const char* lastError();

/// Runs `body`, translating exceptions into result codes (and the last-error message prefixed by `fn`).
template <typename Body>
hetcclResult_t guarded(const char* fn, Body&& body) noexcept {
  try {
    body();
    return hetcclSuccess;
  } catch (const Error& e) {
    setLastError(concat(fn, ": ", e.what()));
    return static_cast<hetcclResult_t>(e.code());
  } catch (const std::bad_alloc&) {
    setLastError(concat(fn, ": out of host memory"));
    return hetcclSystemError;
  } catch (const std::exception& e) {
    setLastError(concat(fn, ": internal error: ", e.what()));
    return hetcclInternalError;
  } catch (...) {
    setLastError(concat(fn, ": internal error: unknown exception"));
    return hetcclInternalError;
  }
}

/// guarded() for calls that use a communicator: looks the handle up (InvalidArgument for null,
/// InvalidUsage for a destroyed or aborted one) and holds a reference for the whole call, so that a
/// concurrent destroy or abort never frees the communicator under it. Inside a group the reference is
/// kept until the outermost group end, which runs the queued operation.
template <typename Body>
hetcclResult_t guardedComm(const char* fn, hetcclComm_t comm, Body&& body) noexcept {
  // `ref` outlives the translation of an exception: the exception may be an object the communicator
  // owns (a connection's stored failure, rethrown), which must not be freed while it is being read.
  CommRef ref;
  return guarded(fn, [&] {
    ref = lookup(comm);
    body(*ref->impl);
    if (group::active()) hold(ref);
  });
}

}  // namespace hetccl::abi
