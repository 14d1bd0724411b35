// The one place exceptions become result codes: every extern "C" entry point runs its body through
// guarded(), which records the message as the thread's last error.
#pragma once

#include <atomic>
#include <memory>
#include <new>
#include <string>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "hetccl/hetccl.h"

/// The opaque handle behind hetcclComm_t.
struct hetcclComm {
  std::unique_ptr<hetccl::Communicator> impl;
  std::atomic<int> callsInFlight{0};  ///< entry points currently using `impl` (abort waits for them)
};

namespace hetccl::abi {

/// Records `message` as this thread's last error (hetcclGetLastError).
void setLastError(const std::string& message);
const char* lastError();

/// Throws InvalidArgument when comm is null, InvalidUsage when it was already destroyed.
Communicator& checkedComm(hetcclComm_t comm, const char* fn);

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

/// guarded() for calls that use a communicator: counts the call as in flight so that a concurrent
/// hetcclCommAbort waits for it to leave before freeing the communicator.
template <typename Body>
hetcclResult_t guardedComm(const char* fn, hetcclComm_t comm, Body&& body) noexcept {
  if (comm) comm->callsInFlight.fetch_add(1);
  hetcclResult_t r = guarded(fn, [&] { body(checkedComm(comm, fn)); });
  if (comm) comm->callsInFlight.fetch_sub(1);
  return r;
}

}  // namespace hetccl::abi
