// Communicator state and teardown: ncclCommFinalize / Destroy / Abort, ncclCommGetAsyncError and the
// queries. Destroy and abort keep the handle allocated but dead until the process exits (a few hundred
// bytes, comm_handle.hpp bury()), so that a call racing with them from another thread (a watchdog) or
// made after them gets ncclInvalidUsage instead of touching freed memory; the hetccl communicator under
// it is freed when the last call using it returns (abi/comm_registry.hpp).
#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"
#include "nccl_abi/nccl_group.hpp"

namespace {

using hetccl::nccl_abi::run;

/// Frees what the handle owns besides its communicator (registrations).
void releaseRegistrations(ncclComm_t c) {
  std::lock_guard<std::mutex> lock(c->mu);
  for (auto* r : c->registrations) delete r;
  c->registrations.clear();
}

}  // namespace

HETCCL_NCCL_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommFinalize, comm);
  return run("ncclCommFinalize", [&]() -> hetcclResult_t {
    using namespace hetccl::nccl_abi;
    if (group::active()) {
      ready(comm);
      group::deferFinalize(comm);
      return hetcclSuccess;
    }
    if (comm && comm->settings.blocking) return hetcclCommFinalize(ready(comm));
    startFinalize(comm);  // non-blocking: ncclInProgress until ncclCommGetAsyncError says otherwise
    return hetcclInProgress;
  });
}
HETCCL_NCCL_TWIN(ncclCommFinalize)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommDestroy, comm);
  if (!comm) return ncclSuccess;  // as NCCL
  return run("ncclCommDestroy", [&]() -> hetcclResult_t {
    using namespace hetccl::nccl_abi;
    claim(comm);  // from now on other threads' calls are refused
    group::forget(comm);
    waitIdle(comm);  // a background operation (init, finalize) finishes first; it has its own deadline
    releaseRegistrations(comm);
    hetcclComm_t inner = comm->inner.exchange(nullptr);
    bury(comm);
    return inner ? hetcclCommDestroy(inner) : hetcclSuccess;
  });
}
HETCCL_NCCL_TWIN(ncclCommDestroy)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommAbort, comm);
  if (!comm) return ncclSuccess;
  return run("ncclCommAbort", [&]() -> hetcclResult_t {
    using namespace hetccl::nccl_abi;
    claim(comm);  // from now on other threads' calls are refused
    group::forget(comm);
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      if (comm->op) comm->op->abandon();
      comm->op.reset();
    }
    releaseRegistrations(comm);
    hetcclComm_t inner = comm->inner.exchange(nullptr);
    bury(comm);
    return inner ? hetcclCommAbort(inner) : hetcclSuccess;
  });
}
HETCCL_NCCL_TWIN(ncclCommAbort)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommGetAsyncError, comm, asyncError);
  return run("ncclCommGetAsyncError", [&]() -> hetcclResult_t {
    using namespace hetccl::nccl_abi;
    checkLive(comm);
    if (!asyncError) throw hetccl::InvalidArgument("asyncError is NULL");
    if (hetcclResult_t state = pollState(comm); state != hetcclSuccess) {
      *asyncError = static_cast<ncclResult_t>(state);
      return hetcclSuccess;
    }
    hetcclComm_t inner = comm->inner.load(std::memory_order_acquire);
    if (!inner) throw hetccl::InvalidUsage("communicator has no hetccl communicator (its creation failed)");
    return hetcclCommGetAsyncError(inner, reinterpret_cast<hetcclResult_t*>(asyncError));
  });
}
HETCCL_NCCL_TWIN(ncclCommGetAsyncError)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommCount, comm, count);
  return run("ncclCommCount", [&] { return hetcclCommCount(hetccl::nccl_abi::ready(comm), count); });
}
HETCCL_NCCL_TWIN(ncclCommCount)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommCuDevice, comm, device);
  return run("ncclCommCuDevice", [&] { return hetcclCommCuDevice(hetccl::nccl_abi::ready(comm), device); });
}
HETCCL_NCCL_TWIN(ncclCommCuDevice)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommUserRank, comm, rank);
  return run("ncclCommUserRank", [&] { return hetcclCommUserRank(hetccl::nccl_abi::ready(comm), rank); });
}
HETCCL_NCCL_TWIN(ncclCommUserRank)
