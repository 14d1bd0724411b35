// NCCL entry points hetccl cannot honour: they return ncclInvalidUsage with a message for
// ncclGetLastError (listed in docs/DROP_IN.md). The device API's team queries answer for a communicator
// whose ranks share no load/store-accessible (LSA) memory: the LSA team is the rank alone and the rail
// team is the whole communicator.
#include "nccl_abi/comm_handle.hpp"
#include "nccl_abi/entry.hpp"

using hetccl::nccl_abi::run;

namespace {

ncclResult_t unsupported(const char* fn, const char* why) {
  return run(fn, [&] { throw hetccl::InvalidUsage(hetccl::concat("not supported by hetccl: ", why)); });
}

constexpr const char* kDeviceApi = "NCCL's device API needs NCCL's device runtime, which hetccl does not provide";

/// {nranks, rank} of a ready communicator, or false (with the last error set).
bool shape(const char* fn, ncclComm_t comm, int* nranks, int* rank) {
  return run(fn, [&] {
           hetcclComm_t c = hetccl::nccl_abi::ready(comm);
           hetcclResult_t r = hetcclCommCount(c, nranks);
           return r == hetcclSuccess ? hetcclCommUserRank(c, rank) : r;
         }) == ncclSuccess;
}

}  // namespace

HETCCL_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                               ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommShrink, comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  return unsupported("ncclCommShrink",
                     "the excluded ranks do not take part, and hetccl can only split "
                     "communicators collectively (use ncclCommSplit on all ranks)");
}
HETCCL_NCCL_TWIN(ncclCommShrink)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommRevoke, comm, revokeFlags);
  return unsupported("ncclCommRevoke", "a communicator cannot be revoked and kept (use ncclCommAbort)");
}
HETCCL_NCCL_TWIN(ncclCommRevoke)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                                       int winFlags) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommWindowRegister, comm, buff, size, win, winFlags);
  if (win) *win = nullptr;
  return unsupported("ncclCommWindowRegister", "symmetric memory windows need NCCL's device runtime");
}
HETCCL_NCCL_TWIN(ncclCommWindowRegister)

HETCCL_NCCL_EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclCommWindowDeregister, comm, win);
  return unsupported("ncclCommWindowDeregister", "no window can have been registered");
}
HETCCL_NCCL_TWIN(ncclCommWindowDeregister)

HETCCL_NCCL_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGroupSimulateEnd, simInfo);
  return unsupported("ncclGroupSimulateEnd",
                     "hetccl has no performance model; the group stays open "
                     "(end it with ncclGroupEnd)");
}
HETCCL_NCCL_TWIN(ncclGroupSimulateEnd)

HETCCL_NCCL_EXPORT ncclResult_t ncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                                                  ncclDevComm_t* outDevComm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclDevCommCreate, comm, reqs, outDevComm);
  return unsupported("ncclDevCommCreate", kDeviceApi);
}
HETCCL_NCCL_TWIN(ncclDevCommCreate)

HETCCL_NCCL_EXPORT ncclResult_t ncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclDevCommDestroy, comm, devComm);
  return unsupported("ncclDevCommDestroy", kDeviceApi);
}
HETCCL_NCCL_TWIN(ncclDevCommDestroy)

HETCCL_NCCL_EXPORT ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers,
                                                                ncclLsaBarrierHandle_t* outHandle,
                                                                ncclDevResourceRequirements_t* outReq) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclLsaBarrierCreateRequirement, team, nBarriers, outHandle, outReq);
  return unsupported("ncclLsaBarrierCreateRequirement", kDeviceApi);
}
HETCCL_NCCL_TWIN(ncclLsaBarrierCreateRequirement)

HETCCL_NCCL_EXPORT ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                                                ncclGinBarrierHandle_t* outHandle,
                                                                ncclDevResourceRequirements_t* outReq) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclGinBarrierCreateRequirement, comm, team, nBarriers, outHandle, outReq);
  return unsupported("ncclGinBarrierCreateRequirement", kDeviceApi);
}
HETCCL_NCCL_TWIN(ncclGinBarrierCreateRequirement)

HETCCL_NCCL_EXPORT ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                                           ncclDevResourceRequirements_t* outReq) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclLLA2ACreateRequirement, nBlocks, nSlots, outHandle, outReq);
  return unsupported("ncclLLA2ACreateRequirement", kDeviceApi);
}
HETCCL_NCCL_TWIN(ncclLLA2ACreateRequirement)

// No device API: no slot can be used. 0 slots, and the reason as the last error.
HETCCL_NCCL_EXPORT int ncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclLLA2ACalcSlots, maxElts, maxEltSize);
  unsupported("ncclLLA2ACalcSlots", kDeviceApi);
  return 0;
}
HETCCL_NCCL_TWIN(ncclLLA2ACalcSlots)

HETCCL_NCCL_EXPORT ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclTeamWorld, comm);
  int n = 0, r = 0;
  if (!shape("ncclTeamWorld", comm, &n, &r)) return ncclTeam_t{0, 0, 0};
  return ncclTeam_t{n, r, 1};
}
HETCCL_NCCL_TWIN(ncclTeamWorld)

HETCCL_NCCL_EXPORT ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclTeamLsa, comm);
  int n = 0, r = 0;
  if (!shape("ncclTeamLsa", comm, &n, &r)) return ncclTeam_t{0, 0, 0};
  return ncclTeam_t{1, 0, 1};
}
HETCCL_NCCL_TWIN(ncclTeamLsa)

HETCCL_NCCL_EXPORT ncclTeam_t ncclTeamRail(ncclComm_t comm) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclTeamRail, comm);
  int n = 0, r = 0;
  if (!shape("ncclTeamRail", comm, &n, &r)) return ncclTeam_t{0, 0, 0};
  return ncclTeam_t{n, r, 1};
}
HETCCL_NCCL_TWIN(ncclTeamRail)

// Team rank -> communicator rank: this rank's world rank, offset by the team distance times the stride.
HETCCL_NCCL_EXPORT int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclTeamRankToWorld, comm, team, rank);
  int n = 0, me = 0;
  if (!shape("ncclTeamRankToWorld", comm, &n, &me)) return -1;
  return me + (rank - team.rank) * team.stride;
}
HETCCL_NCCL_TWIN(ncclTeamRankToWorld)

// Team rank -> LSA team rank: only this rank itself is in its LSA team (rank 0); -1 for any other.
HETCCL_NCCL_EXPORT int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  HETCCL_NCCL_ROUTE_VENDOR(ncclTeamRankToLsa, comm, team, rank);
  int n = 0, me = 0;
  if (!shape("ncclTeamRankToLsa", comm, &n, &me)) return -1;
  return rank == team.rank ? 0 : -1;
}
HETCCL_NCCL_TWIN(ncclTeamRankToLsa)
