#include "nccl_abi/nccl_group.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "abi/guard.hpp"
#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"

namespace hetccl::nccl_abi::group {
namespace {

struct State {
  int depth = 0;
  std::vector<ncclComm_t> creations;
  std::vector<ncclComm_t> discarded;
  std::vector<ncclComm_t> finalizations;
};
thread_local State state;

/// The first failure of a group: its code and message.
struct FirstFailure {
  hetcclResult_t result = hetcclSuccess;
  std::string message;
  void note(hetcclResult_t r, const std::string& m) {
    if (result != hetcclSuccess || r == hetcclSuccess || r == hetcclInProgress) return;
    result = r;
    message = m;
  }
};

}  // namespace

bool active() noexcept { return state.depth > 0; }

void start() {
  if (hetcclGroupStart() != hetcclSuccess) throw InternalError(abi::lastError());
  ++state.depth;
}

ncclResult_t end() {
  if (state.depth == 0) throw InvalidUsage("ncclGroupEnd without a matching ncclGroupStart");
  if (--state.depth > 0) return fromHetccl("ncclGroupEnd", hetcclGroupEnd());
  std::vector<ncclComm_t> creations = std::move(state.creations), finals = std::move(state.finalizations);
  std::vector<ncclComm_t> discarded = std::move(state.discarded);
  state = State{};
  FirstFailure first;

  for (ncclComm_t c : discarded) {
    waitIdle(c);
    first.note(pollState(c), concat("ncclCommSplit failed: ", failureMessage(c)));
    if (hetcclComm_t stray = c->inner.exchange(nullptr)) hetcclCommDestroy(stray);
    delete c;
  }
  for (ncclComm_t c : creations)
    if (c->settings.blocking) {
      waitIdle(c);
      first.note(pollState(c), concat("communicator creation failed: ", failureMessage(c)));
    }
  hetcclResult_t collectives = hetcclGroupEnd();  // always: it also closes hetccl's group
  first.note(collectives, abi::lastError());
  for (ncclComm_t c : finals) {
    try {
      startFinalize(c);
    } catch (const Error& e) {
      first.note(static_cast<hetcclResult_t>(e.code()), e.what());
    }
  }
  for (ncclComm_t c : finals)
    if (c->settings.blocking) {
      waitIdle(c);
      first.note(pollState(c), concat("ncclCommFinalize failed: ", failureMessage(c)));
    }

  if (first.result != hetcclSuccess) {
    std::string m = first.message.rfind("hetccl", 0) == 0 ? first.message : concat("ncclGroupEnd: ", first.message);
    abi::setLastError(m);
    return fromHetccl("ncclGroupEnd", first.result);
  }
  for (const auto* list : {&creations, &finals})
    for (ncclComm_t c : *list)
      if (!c->settings.blocking && pollState(c) == hetcclInProgress) return ncclInProgress;
  return ncclSuccess;
}

void addCreation(ncclComm_t c) { state.creations.push_back(c); }
void addDiscarded(ncclComm_t c) { state.discarded.push_back(c); }
void deferFinalize(ncclComm_t c) { state.finalizations.push_back(c); }

void forget(ncclComm_t c) noexcept {
  std::erase(state.creations, c);
  std::erase(state.finalizations, c);
}

}  // namespace hetccl::nccl_abi::group
