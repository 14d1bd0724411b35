#include "nccl_abi/comm_handle.hpp"

#include <vector>

#include "abi/guard.hpp"
#include "core/error.hpp"

namespace hetccl::nccl_abi {
namespace {

/// Installs what a finished operation produced. Caller holds c->mu.
void collectLocked(ncclComm* c) {
  OpOutcome out = c->op->wait();
  c->op.reset();
  if (out.produced) c->inner.store(out.produced, std::memory_order_release);
  if (out.result != hetcclSuccess) {
    c->failureMessage = out.message;
    c->failure.store(out.result, std::memory_order_release);
  }
  c->busy.store(false, std::memory_order_release);
}

}  // namespace

ncclComm* newHandle(const CommSettings& settings) {
  auto* c = new ncclComm;
  c->settings = settings;
  return c;
}

void attach(ncclComm* c, std::unique_ptr<BackgroundOp> op) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->op) throw InternalError("a background operation is already attached to this communicator");
  c->op = std::move(op);
  c->busy.store(true, std::memory_order_release);
}

hetcclResult_t pollState(ncclComm* c) {
  if (c->busy.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->op) {
      if (!c->op->finished()) return hetcclInProgress;
      collectLocked(c);
    }
  }
  return static_cast<hetcclResult_t>(c->failure.load(std::memory_order_acquire));
}

void waitIdle(ncclComm* c) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->op) collectLocked(c);
}

void checkLive(const ncclComm* c) {
  if (!c) throw InvalidArgument("comm is NULL");
  if (c->magic.load(std::memory_order_acquire) != ncclComm::kLive)
    throw InvalidUsage("comm is not a live communicator (destroyed, aborted, or not created by hetccl's NCCL library)");
}

void claim(ncclComm* c) {
  checkLive(c);
  uint64_t expected = ncclComm::kLive;
  if (!c->magic.compare_exchange_strong(expected, ncclComm::kDead, std::memory_order_acq_rel))
    throw InvalidUsage("comm is being destroyed or aborted by another thread");
}

void bury(ncclComm* c) {
  static std::mutex mu;
  static auto* graveyard = new std::vector<ncclComm*>;
  std::lock_guard<std::mutex> lock(mu);
  graveyard->push_back(c);
}

hetcclComm_t ready(ncclComm* c) {
  checkLive(c);
  hetcclResult_t state = pollState(c);
  if (state == hetcclInProgress)
    throw InvalidArgument(
        "communicator is not ready: a non-blocking operation on it is still in progress "
        "(poll ncclCommGetAsyncError until it reports ncclSuccess)");
  if (state != hetcclSuccess)
    throw Error(static_cast<Result>(state), concat("communicator unusable: ", failureMessage(c)));
  hetcclComm_t inner = c->inner.load(std::memory_order_acquire);
  if (!inner) throw InvalidUsage("communicator has no hetccl communicator (its creation failed)");
  return inner;
}

void startFinalize(ncclComm* c) {
  checkLive(c);
  waitIdle(c);
  hetcclComm_t inner = ready(c);
  attach(c, BackgroundOp::start(
                [inner] {
                  OpOutcome out;
                  out.result = hetcclCommFinalize(inner);
                  if (out.result != hetcclSuccess) out.message = abi::lastError();
                  return out;
                },
                currentDevice()));
}

std::string failureMessage(ncclComm* c) {
  std::lock_guard<std::mutex> lock(c->mu);
  return c->failureMessage;
}

}  // namespace hetccl::nccl_abi
