// Communicator lifetime entry points: init, split, finalize, destroy, abort, queries. Handles and their
// lifetime: abi/comm_registry.hpp.
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "abi/guard.hpp"
#include "bootstrap/unique_id.hpp"
#include "comm/group.hpp"
#include "core/deadline.hpp"
#include "core/log.hpp"

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

hetcclComm_t initRank(int nranks, const hetcclUniqueId& commId, int rank, const hetcclConfig_t* config) {
  CommOptions options = readConfig(config);
  auto id = bootstrap::UniqueId::decode(reinterpret_cast<const unsigned char*>(commId.internal), sizeof commId.internal);
  return registerComm(Communicator::create(id, nranks, rank, options));
}

/// How long abort waits for calls on other threads to leave (they fail promptly once the abort flag is
/// set); a call still inside after that frees the communicator itself when it leaves.
constexpr auto kAbortDrain = std::chrono::seconds(2);

}  // namespace

void setLastError(const std::string& message) { tlsLastError = message; }
const char* lastError() { return tlsLastError.c_str(); }

}  // namespace hetccl::abi

extern "C" {

HETCCL_API const char* hetcclGetLastError(hetcclComm_t comm) {
  const char* tls = hetccl::abi::lastError();
  if (*tls != '\0') return tls;
  if (hetccl::abi::CommRef ref = hetccl::abi::tryLookup(comm); ref && ref->impl->asyncError() != hetccl::Result::Success) {
    hetccl::abi::setLastError(ref->impl->asyncErrorMessage());
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
    if (child) *newcomm = hetccl::abi::registerComm(std::move(child));
  });
}

HETCCL_API hetcclResult_t hetcclCommFinalize(hetcclComm_t comm) {
  return guardedComm("hetcclCommFinalize", comm, [&](hetccl::Communicator& c) { c.finalize(); });
}

HETCCL_API hetcclResult_t hetcclCommDestroy(hetcclComm_t comm) {
  if (!comm) return hetcclSuccess;  // as NCCL: destroying NULL is a no-op
  return guarded("hetcclCommDestroy", [&] {
    using namespace hetccl;
    abi::CommRef ref = abi::unregister(comm);  // later calls on `comm` get InvalidUsage
    group::forget(*ref->impl);
    abi::dropHold(ref.get());
    // Calls other threads are still making on it finish first; each has its own deadline.
    Deadline until = Deadline::fromConfig();
    if (!abi::waitSoleOwner(ref, until.at() + std::chrono::seconds(5))) {
      ref->impl->abort();
      throw InvalidUsage("a call on another thread still used the communicator after HETCCL_TIMEOUT; it was "
                         "aborted instead of finalized and is freed when that call returns");
    }
    ref->impl->finalize();
  });  // the last reference goes here (or with the last call still holding one)
}

HETCCL_API hetcclResult_t hetcclCommAbort(hetcclComm_t comm) {
  if (!comm) return hetcclSuccess;
  return guarded("hetcclCommAbort", [&] {
    using namespace hetccl;
    abi::CommRef ref = abi::unregister(comm);
    ref->impl->abort();  // calls in flight on other threads fail promptly
    group::forget(*ref->impl);
    abi::dropHold(ref.get());
    if (!abi::waitSoleOwner(ref, std::chrono::steady_clock::now() + abi::kAbortDrain))
      HETCCL_WARN(log::kInit, "hetcclCommAbort: a call on another thread still uses the communicator; it is freed "
                              "when that call returns");
  });
}

HETCCL_API hetcclResult_t hetcclCommGetAsyncError(hetcclComm_t comm, hetcclResult_t* asyncError) {
  return guardedComm("hetcclCommGetAsyncError", comm, [&](hetccl::Communicator& c) {
    if (!asyncError) throw hetccl::InvalidArgument("asyncError is null");
    *asyncError = static_cast<hetcclResult_t>(c.pollAsyncError());
  });
}

HETCCL_API hetcclResult_t hetcclCommCount(const hetcclComm_t comm, int* count) {
  return guardedComm("hetcclCommCount", comm, [&](hetccl::Communicator& c) {
    if (!count) throw hetccl::InvalidArgument("count is null");
    *count = c.size();
  });
}

HETCCL_API hetcclResult_t hetcclCommUserRank(const hetcclComm_t comm, int* rank) {
  return guardedComm("hetcclCommUserRank", comm, [&](hetccl::Communicator& c) {
    if (!rank) throw hetccl::InvalidArgument("rank is null");
    *rank = c.rank();
  });
}

HETCCL_API hetcclResult_t hetcclCommCuDevice(const hetcclComm_t comm, int* device) {
  return guardedComm("hetcclCommCuDevice", comm, [&](hetccl::Communicator& c) {
    if (!device) throw hetccl::InvalidArgument("device is null");
    *device = c.peers()[c.rank()].deviceIndex;
  });
}

}  // extern "C"
