// Communicator creation: unique id, ncclCommInitRank[Config|Scalable], ncclCommInitAll, ncclCommSplit.
// A blocking communicator outside a group is created before the call returns; a non-blocking one, or one
// created inside a group, on a background thread (background_op.hpp, nccl_group.hpp).
#include <cstring>
#include <vector>

#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"
#include "nccl_abi/nccl_group.hpp"

using hetccl::nccl_abi::BackgroundOp;
using hetccl::nccl_abi::CommSettings;
using hetccl::nccl_abi::OpOutcome;

static_assert(sizeof(ncclUniqueId) == sizeof(hetcclUniqueId), "one unique id layout for NCCL, RCCL and hetccl");

namespace {

hetcclUniqueId toHetccl(const ncclUniqueId& id) {
  hetcclUniqueId h;
  std::memcpy(h.internal, id.internal, sizeof h.internal);
  return h;
}

OpOutcome initOutcome(int nranks, const hetcclUniqueId& id, int rank, const CommSettings& settings) {
  OpOutcome out;
  hetcclConfig_t config = settings.hetcclConfig();
  out.result = hetcclCommInitRankConfig(&out.produced, nranks, id, rank, &config);
  if (out.result != hetcclSuccess) out.message = hetccl::abi::lastError();
  return out;
}

/// A handle whose communicator `make` produces: now (blocking, outside a group) or in the background.
/// Returns the handle in *comm and hetcclInProgress / hetcclSuccess, or the failure of `make`.
hetcclResult_t createHandle(ncclComm_t* comm, const CommSettings& settings, BackgroundOp::Body make) {
  using namespace hetccl::nccl_abi;
  if (settings.blocking && !group::active()) {
    OpOutcome out = make();
    if (out.result != hetcclSuccess) {
      hetccl::abi::setLastError(out.message);
      return out.result;
    }
    ncclComm_t c = newHandle(settings);
    c->inner.store(out.produced);
    *comm = c;
    return hetcclSuccess;
  }
  ncclComm_t c = newHandle(settings);
  try {
    attach(c, BackgroundOp::start(std::move(make), currentDevice()));
  } catch (...) {
    delete c;
    throw;
  }
  *comm = c;
  if (group::active()) {
    group::addCreation(c);
    return hetcclSuccess;
  }
  return hetcclInProgress;
}

ncclResult_t initRank(const char* fn, ncclComm_t* comm, int nranks, const ncclUniqueId& commId, int rank,
                      ncclConfig_t* config) {
  return hetccl::nccl_abi::run(fn, [&] {
    if (!comm) throw hetccl::InvalidArgument("comm is NULL");
    *comm = nullptr;
    if (nranks < 1 || rank < 0 || rank >= nranks)  // refused now, also for a non-blocking communicator
      throw hetccl::InvalidArgument(hetccl::concat("rank ", rank, " of ", nranks, " ranks is invalid"));
    CommSettings settings = hetccl::nccl_abi::readConfig(config, CommSettings{});
    hetcclUniqueId id = toHetccl(commId);
    return createHandle(comm, settings, [=] { return initOutcome(nranks, id, rank, settings); });
  });
}

}  // namespace

HETCCL_NCCL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGetUniqueId, uniqueId);
  return hetccl::nccl_abi::run("ncclGetUniqueId",
                               [&] { return hetcclGetUniqueId(reinterpret_cast<hetcclUniqueId*>(uniqueId)); });
}
HETCCL_NCCL_TWIN(ncclGetUniqueId)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                                       ncclConfig_t* config) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommInitRankConfig, comm, nranks, commId, rank, config);
  return initRank("ncclCommInitRankConfig", comm, nranks, commId, rank, config);
}
HETCCL_NCCL_TWIN(ncclCommInitRankConfig)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommInitRank, comm, nranks, commId, rank);
  return initRank("ncclCommInitRank", comm, nranks, commId, rank, nullptr);
}
HETCCL_NCCL_TWIN(ncclCommInitRank)

// Every rank passes the same nId ids; hetccl's rendezvous needs one root, so the first id serves (its
// creator runs the root; the other ids' roots stay idle until their listeners time out).
HETCCL_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                                         ncclUniqueId* commIds, ncclConfig_t* config) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommInitRankScalable, newcomm, nranks, myrank, nId, commIds, config);
  if (nId < 1 || !commIds)
    return hetccl::nccl_abi::run("ncclCommInitRankScalable", [&] {
      throw hetccl::InvalidArgument(hetccl::concat("nId is ", nId, " and commIds is ", commIds ? "set" : "NULL",
                                                   "; at least one unique id is needed"));
    });
  return initRank("ncclCommInitRankScalable", newcomm, nranks, commIds[0], myrank, config);
}
HETCCL_NCCL_TWIN(ncclCommInitRankScalable)

// One thread per rank, each bound to its device (devlist[i], else device i) when this process has GPUs.
HETCCL_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommInitAll, comms, ndev, devlist);
  return hetccl::nccl_abi::run("ncclCommInitAll", [&]() -> hetcclResult_t {
    using namespace hetccl::nccl_abi;
    if (!comms) throw hetccl::InvalidArgument("comm is NULL");
    if (ndev < 1) throw hetccl::InvalidArgument(hetccl::concat("ndev is ", ndev, "; it must be at least 1"));
    hetcclUniqueId id;
    if (hetcclResult_t r = hetcclGetUniqueId(&id); r != hetcclSuccess) return r;
    const bool gpus = currentDevice() >= 0;
    std::vector<std::unique_ptr<BackgroundOp>> ops;
    for (int r = 0; r < ndev; ++r)
      ops.push_back(BackgroundOp::start([=] { return initOutcome(ndev, id, r, CommSettings{}); },
                                        gpus ? (devlist ? devlist[r] : r) : -1));
    std::vector<OpOutcome> outs;
    for (auto& op : ops) outs.push_back(op->wait());
    for (int r = 0; r < ndev; ++r)
      if (outs[r].result != hetcclSuccess) {
        for (auto& o : outs)
          if (o.produced) hetcclCommAbort(o.produced);
        throw hetccl::Error(static_cast<hetccl::Result>(outs[r].result),
                            hetccl::concat("rank ", r, ": ", outs[r].message));
      }
    for (int r = 0; r < ndev; ++r) {
      comms[r] = newHandle(CommSettings{});
      comms[r]->inner.store(outs[r].produced);
    }
    return hetcclSuccess;
  });
}
HETCCL_NCCL_TWIN(ncclCommInitAll)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                              ncclConfig_t* config) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommSplit, comm, color, key, newcomm, config);
  return hetccl::nccl_abi::run("ncclCommSplit", [&]() -> hetcclResult_t {
    using namespace hetccl::nccl_abi;
    if (!newcomm) throw hetccl::InvalidArgument("newcomm is NULL");
    *newcomm = nullptr;
    hetcclComm_t parent = ready(comm);
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
      throw hetccl::InvalidArgument(hetccl::concat("color ", color, " is negative (use NCCL_SPLIT_NOCOLOR)"));
    CommSettings settings = readConfig(config, comm->settings);
    auto make = [=] {
      OpOutcome out;
      hetcclConfig_t hc = settings.hetcclConfig();
      out.result = hetcclCommSplit(parent, color, key, &out.produced, &hc);
      if (out.result != hetcclSuccess) out.message = hetccl::abi::lastError();
      return out;
    };
    if (!group::active()) {  // outside a group a split completes before returning, also when non-blocking
      OpOutcome out = make();
      if (out.result != hetcclSuccess) return out.result;  // hetccl's last error is this thread's
      if (out.produced) {
        *newcomm = newHandle(settings);
        (*newcomm)->inner.store(out.produced);
      }
      return hetcclSuccess;
    }
    ncclComm_t c = newHandle(settings);
    attach(c, BackgroundOp::start(std::move(make), currentDevice()));
    if (color == NCCL_SPLIT_NOCOLOR) {
      group::addDiscarded(c);  // takes part in the split, gets no communicator
    } else {
      group::addCreation(c);
      *newcomm = c;
    }
    return hetcclSuccess;
  });
}
HETCCL_NCCL_TWIN(ncclCommSplit)
