// Communicator lifetime entry points: init, split, finalize, destroy, abort, queries.
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "abi/guard.hpp"
#include "bootstrap/unique_id.hpp"
#include "comm/group.hpp"

using hetccl::abi::guarded;
using hetccl::abi::guardedComm;

namespace hetccl::abi {
namespace {

thread_local std::string tlsLastError;

CommOptions readConfig(const hetcclConfig_t* config) {
  CommOptions options;
  if (!config) return options;
  if (config->magic != HETCCL_CONFIG_MAGIC)
    throw InvalidArgument("config was not initialised with HETCCL_CONFIG_INITIALIZER (bad magic)");
  if (config->size < offsetof(hetcclConfig_t, blocking) + sizeof(int))
    throw InvalidArgument(concat("config size ", config->size, " is too small"));
  // Fields beyond what the caller's struct holds keep their defaults (older callers, smaller structs).
  if (config->size >= offsetof(hetcclConfig_t, netName) + sizeof(const char*) && config->netName)
    options.transport = config->netName;
  return options;
}

hetcclComm* initRank(int nranks, const hetcclUniqueId& commId, int rank, const hetcclConfig_t* config) {
  CommOptions options = readConfig(config);
  auto id = bootstrap::UniqueId::decode(reinterpret_cast<const unsigned char*>(commId.internal), sizeof commId.internal);
  auto handle = std::make_unique<hetcclComm>();
  handle->impl = Communicator::create(id, nranks, rank, options);
  return handle.release();
}

}  // namespace

void setLastError(const std::string& message) { tlsLastError = message; }
const char* lastError() { return tlsLastError.c_str(); }

Communicator& checkedComm(hetcclComm_t comm, const char* fn) {
  if (!comm) throw InvalidArgument("comm is null");
  if (!comm->impl) throw InvalidUsage("comm was destroyed");
  return *comm->impl;
}

}  // namespace hetccl::abi

extern "C" {

HETCCL_API const char* hetcclGetLastError(hetcclComm_t comm) {
  const char* tls = hetccl::abi::lastError();
  if (*tls == '\0' && comm && comm->impl && comm->impl->asyncError() != hetccl::Result::Success) {
    hetccl::abi::setLastError(comm->impl->asyncErrorMessage());
    return hetccl::abi::lastError();
  }
  return tls;
}

HETCCL_API hetcclResult_t hetcclGetUniqueId(hetcclUniqueId* uniqueId) {
  return guarded("hetcclGetUniqueId", [&] {
    if (!uniqueId) throw hetccl::InvalidArgument("uniqueId is null");
    auto bytes = hetccl::bootstrap::createUniqueId().encode();
    std::memcpy(uniqueId->internal, bytes.data(), sizeof uniqueId->internal);
  });
}

HETCCL_API hetcclResult_t hetcclCommInitRankConfig(hetcclComm_t* comm, int nranks, hetcclUniqueId commId, int rank,
                                                   hetcclConfig_t* config) {
  return guarded("hetcclCommInitRankConfig", [&] {
    if (!comm) throw hetccl::InvalidArgument("comm is null");
    *comm = nullptr;
    *comm = hetccl::abi::initRank(nranks, commId, rank, config);
  });
}

HETCCL_API hetcclResult_t hetcclCommInitRank(hetcclComm_t* comm, int nranks, hetcclUniqueId commId, int rank) {
  return hetcclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

HETCCL_API hetcclResult_t hetcclCommInitAll(hetcclComm_t* comms, int ndev, const int* devlist) {
  return guarded("hetcclCommInitAll", [&] {
    if (!comms) throw hetccl::InvalidArgument("comms is null");
    if (ndev < 1) throw hetccl::InvalidArgument(hetccl::concat("ndev is ", ndev, "; it must be at least 1"));
    auto bytes = hetccl::bootstrap::createUniqueId().encode();
    hetcclUniqueId id;
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
    std::vector<hetcclResult_t> results(ndev, hetcclSuccess);
    std::vector<std::string> errors(ndev);
    std::vector<std::thread> threads;
    for (int r = 0; r < ndev; ++r)
      threads.emplace_back([&, r] {
        results[r] = hetcclCommInitRank(&comms[r], ndev, id, r);
        if (results[r] != hetcclSuccess) errors[r] = hetccl::abi::lastError();
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < ndev; ++r)
      if (results[r] != hetcclSuccess) {
        for (int q = 0; q < ndev; ++q)
          if (comms[q]) hetcclCommAbort(comms[q]), comms[q] = nullptr;
        throw hetccl::Error(static_cast<hetccl::Result>(results[r]), hetccl::concat("rank ", r, ": ", errors[r]));
      }
  });
}

HETCCL_API hetcclResult_t hetcclCommSplit(hetcclComm_t comm, int color, int key, hetcclComm_t* newcomm,
                                          hetcclConfig_t* config) {
  return guardedComm("hetcclCommSplit", comm, [&](hetccl::Communicator& c) {
    if (!newcomm) throw hetccl::InvalidArgument("newcomm is null");
    *newcomm = nullptr;
    if (color < 0 && color != HETCCL_SPLIT_NOCOLOR)
      throw hetccl::InvalidArgument(hetccl::concat("color ", color, " is negative (use HETCCL_SPLIT_NOCOLOR)"));
    auto options = hetccl::abi::readConfig(config);
    auto child = c.split(color, key, options);
    if (child) {
      auto handle = std::make_unique<hetcclComm>();
      handle->impl = std::move(child);
      *newcomm = handle.release();
    }
  });
}

HETCCL_API hetcclResult_t hetcclCommFinalize(hetcclComm_t comm) {
  return guardedComm("hetcclCommFinalize", comm, [&](hetccl::Communicator& c) { c.finalize(); });
}

HETCCL_API hetcclResult_t hetcclCommDestroy(hetcclComm_t comm) {
  if (!comm) return hetcclSuccess;  // as NCCL: destroying NULL is a no-op
  hetcclResult_t r = hetcclSuccess;
  if (comm->impl) {
    r = guarded("hetcclCommDestroy", [&] {
      hetccl::group::forget(*comm->impl);
      comm->impl->finalize();
    });
  }
  comm->impl.reset();
  delete comm;
  return r;
}

HETCCL_API hetcclResult_t hetcclCommAbort(hetcclComm_t comm) {
  if (!comm) return hetcclSuccess;
  if (comm->impl) {
    comm->impl->abort();
    // Calls in other threads leave promptly once the abort flag is set; wait for them (bounded).
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (comm->callsInFlight.load() > 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (comm->callsInFlight.load() > 0) {
      hetccl::abi::setLastError("hetcclCommAbort: a call still uses the communicator; its memory is leaked");
      return hetcclSuccess;  // freeing it under a running call would be worse
    }
    hetccl::group::forget(*comm->impl);
    comm->impl.reset();
  }
  delete comm;
  return hetcclSuccess;
}

HETCCL_API hetcclResult_t hetcclCommGetAsyncError(hetcclComm_t comm, hetcclResult_t* asyncError) {
  if (!comm || !comm->impl || !asyncError) return hetcclInvalidArgument;
  *asyncError = static_cast<hetcclResult_t>(comm->impl->asyncError());
  return hetcclSuccess;
}

HETCCL_API hetcclResult_t hetcclCommCount(const hetcclComm_t comm, int* count) {
  return guarded("hetcclCommCount", [&] {
    if (!count) throw hetccl::InvalidArgument("count is null");
    *count = hetccl::abi::checkedComm(comm, "hetcclCommCount").size();
  });
}

HETCCL_API hetcclResult_t hetcclCommUserRank(const hetcclComm_t comm, int* rank) {
  return guarded("hetcclCommUserRank", [&] {
    if (!rank) throw hetccl::InvalidArgument("rank is null");
    *rank = hetccl::abi::checkedComm(comm, "hetcclCommUserRank").rank();
  });
}

HETCCL_API hetcclResult_t hetcclCommCuDevice(const hetcclComm_t comm, int* device) {
  return guarded("hetcclCommCuDevice", [&] {
    if (!device) throw hetccl::InvalidArgument("device is null");
    auto& c = hetccl::abi::checkedComm(comm, "hetcclCommCuDevice");
    *device = c.peers()[c.rank()].deviceIndex;
  });
}

}  // extern "C"
