/* bad_input LIB [--expect-version CODE | --expect-version-error]: one process, one rank. Bad arguments
 * return NCCL's result codes with a message naming the function; refused calls change nothing (a valid
 * call right after works); entry points hetccl cannot honour return ncclInvalidUsage; configs of other
 * sizes and versions are read the way NCCL reads them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_api.h"

static const DropinApi* A;

static void expectFail(ncclResult_t got, ncclResult_t want, const char* what, const char* part) {
  dropinExpect(A, got, want, what);
  if (got == want) dropinExpectMessage(A, part, what);
}

static ncclComm_t initOne(ncclConfig_t* config, ncclResult_t want, const char* what) {
  ncclUniqueId id;
  dropinExpect(A, A->ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  ncclComm_t comm = (ncclComm_t)&id;
  dropinExpect(A, A->ncclCommInitRankConfig(&comm, 1, id, 0, config), want, what);
  if (want != ncclSuccess && comm != NULL) dropinFail(A, "a refused init left *comm set");
  return comm;
}

static void configCases(void) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.magic = 0x12345678;
  initOne(&c, ncclInvalidArgument, "config with a bad magic");
  dropinExpectMessage(A, "NCCL_CONFIG_INITIALIZER", "bad magic message");
  c = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  c.size = 8; /* too small to hold the magic */
  initOne(&c, ncclInvalidArgument, "config of 8 bytes");
  c = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  c.blocking = 5;
  initOne(&c, ncclInvalidArgument, "config blocking = 5");
  dropinExpectMessage(A, "blocking", "blocking = 5 message");
  c = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  c.blocking = 0;
  ncclUniqueId id;
  ncclComm_t comm = NULL;
  dropinExpect(A, A->ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  expectFail(A->ncclCommInitRankConfig(&comm, 2, id, 2, &c), ncclInvalidArgument, "non-blocking init of rank 2 of 2",
             "rank 2 of 2 ranks is invalid");

  /* An NCCL 2.17 config (fields up to splitShare) whose newer fields hold garbage, and an oversized
   * config from a future header: both accepted. */
  struct {
    ncclConfig_t c;
    char future[64];
  } big;
  memset(&big, 0x5a, sizeof big);
  big.c = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  big.c.size = sizeof big;
  comm = initOne(&big.c, ncclSuccess, "oversized config");
  dropinExpect(A, A->ncclCommDestroy(comm), ncclSuccess, "destroy (oversized config)");
  c = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  c.size = offsetof(ncclConfig_t, splitShare) + sizeof(int);
  c.version = NCCL_VERSION(2, 17, 0);
  c.trafficClass = 12345, c.commName = (const char*)1; /* beyond size: never read */
  comm = initOne(&c, ncclSuccess, "NCCL 2.17-sized config");
  dropinExpect(A, A->ncclCommDestroy(comm), ncclSuccess, "destroy (2.17 config)");
}

static void callCases(ncclComm_t comm) {
  int32_t v = 7, out = 0;
  expectFail(A->ncclAllReduce(&v, &out, 1, ncclInt32, ncclSum, NULL, NULL), ncclInvalidArgument, "null comm",
             "ncclAllReduce: comm is NULL");
  expectFail(A->ncclAllReduce(&v, &out, 1, (ncclDataType_t)42, ncclSum, comm, NULL), ncclInvalidArgument,
             "data type 42", "invalid data type 42");
  expectFail(A->ncclAllReduce(&v, &out, 1, ncclInt32, (ncclRedOp_t)99, comm, NULL), ncclInvalidArgument, "op 99",
             "ncclAllReduce: invalid reduction operator 99");
  expectFail(A->ncclAllReduce(NULL, &out, 1, ncclInt32, ncclSum, comm, NULL), ncclInvalidArgument, "null sendbuff",
             "sendbuff");
  expectFail(A->ncclBroadcast(&v, &out, 1, ncclInt32, 3, comm, NULL), ncclInvalidArgument, "root 3 of 1", "root");
  expectFail(A->ncclGather(&v, &out, 1, ncclInt32, -1, comm, NULL), ncclInvalidArgument, "gather root -1", "root");
  expectFail(A->ncclSend(&v, 1, ncclInt32, 1, comm, NULL), ncclInvalidArgument, "send to peer 1 of 1", "peer");
  expectFail(A->ncclReduceScatter(&v, &out, 1, (ncclDataType_t)12, ncclSum, comm, NULL), ncclInvalidArgument,
             "type 12", "type");
  ncclRedOp_t op;
  float f = 2;
  expectFail(A->ncclRedOpCreatePreMulSum(&op, &f, ncclFloat32, ncclScalarDevice, comm), ncclInvalidUsage,
             "device scalar", "ncclScalarDevice");
  expectFail(A->ncclGroupEnd(), ncclInvalidUsage, "ncclGroupEnd without start", "without a matching");
  /* Nothing above was queued or changed: a valid call works. */
  dropinExpect(A, A->ncclAllReduce(&v, &out, 1, ncclInt32, ncclSum, comm, NULL), ncclSuccess, "allreduce after errors");
  if (out != 7) dropinFail(A, "allreduce after errors: wrong value");

  expectFail(A->ncclGetVersion(NULL), ncclInvalidArgument, "ncclGetVersion(NULL)", "version is NULL");
  ncclResult_t async;
  expectFail(A->ncclCommGetAsyncError(NULL, &async), ncclInvalidArgument, "async error of NULL", "comm is NULL");
  dropinExpect(A, A->ncclCommDestroy(NULL), ncclSuccess, "ncclCommDestroy(NULL)");
  if (!A->ncclGetErrorString(ncclInvalidUsage) || !*A->ncclGetErrorString(ncclInvalidUsage))
    dropinFail(A, "ncclGetErrorString");

  void* handle = NULL;
  dropinExpect(A, A->ncclCommRegister(comm, &v, sizeof v, &handle), ncclSuccess, "ncclCommRegister");
  expectFail(A->ncclCommDeregister(comm, &v), ncclInvalidArgument, "deregister a foreign handle", "ncclCommRegister");
  dropinExpect(A, A->ncclCommDeregister(comm, handle), ncclSuccess, "ncclCommDeregister");
  void* mem = NULL;
  expectFail(A->ncclMemAlloc(NULL, 8), ncclInvalidArgument, "ncclMemAlloc(NULL)", "ptr NULL");
  expectFail(A->ncclMemAlloc(&mem, 8), ncclInvalidUsage, "ncclMemAlloc on a CPU rank", "no GPU");
  dropinExpect(A, A->ncclMemFree(NULL), ncclSuccess, "ncclMemFree(NULL)");

  ncclTeam_t world = A->ncclTeamWorld(comm), lsa = A->ncclTeamLsa(comm);
  if (world.nRanks != 1 || world.rank != 0 || world.stride != 1 || lsa.nRanks != 1) dropinFail(A, "team queries");
  if (A->ncclTeamRankToWorld(comm, world, 0) != 0) dropinFail(A, "ncclTeamRankToWorld");
}

static void unsupportedCases(ncclComm_t comm) {
  ncclComm_t other = NULL;
  int excluded = 0;
  expectFail(A->ncclCommShrink(comm, &excluded, 1, &other, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidUsage,
             "ncclCommShrink", "not supported by hetccl");
  ncclWindow_t win;
  expectFail(A->ncclCommWindowRegister(comm, &excluded, 4, &win, NCCL_WIN_DEFAULT), ncclInvalidUsage,
             "ncclCommWindowRegister", "ncclCommWindowRegister: not supported");
  expectFail(A->ncclDevCommCreate(comm, NULL, NULL), ncclInvalidUsage, "ncclDevCommCreate", "device API");
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  dropinExpect(A, A->ncclGroupStart(), ncclSuccess, "ncclGroupStart (simulate)");
  expectFail(A->ncclGroupSimulateEnd(&sim), ncclInvalidUsage, "ncclGroupSimulateEnd", "not supported");
  dropinExpect(A, A->ncclGroupEnd(), ncclSuccess, "ncclGroupEnd after a refused simulation");
}

int main(int argc, char** argv) {
  if (argc < 2) return fprintf(stderr, "usage: bad_input LIB [--expect-version CODE | --expect-version-error]\n"), 2;
  DropinApi api;
  dropinLoad(&api, argv[1], RTLD_LOCAL);
  A = &api;
  int version = 0;
  if (argc > 3 && !strcmp(argv[2], "--expect-version")) {
    dropinExpect(A, A->ncclGetVersion(&version), ncclSuccess, "ncclGetVersion");
    if (version != atoi(argv[3])) dropinFail(A, "ncclGetVersion: not the configured version");
  } else if (argc > 2 && !strcmp(argv[2], "--expect-version-error")) {
    expectFail(A->ncclGetVersion(&version), ncclInvalidArgument, "garbled HETCCL_NCCL_VERSION", "HETCCL_NCCL_VERSION");
  } else {
    dropinExpect(A, A->ncclGetVersion(&version), ncclSuccess, "ncclGetVersion");
    if (version != 22809) dropinFail(A, "ncclGetVersion default is not 22809");
    configCases();
    ncclComm_t comm = initOne(NULL, ncclSuccess, "1-rank init");
    callCases(comm);
    unsupportedCases(comm);
    /* After an abort the handle is dead: calls are refused, not crashes. */
    dropinExpect(A, A->ncclCommAbort(comm), ncclSuccess, "ncclCommAbort");
    int32_t v = 1;
    expectFail(A->ncclAllReduce(&v, &v, 1, ncclInt32, ncclSum, comm, NULL), ncclInvalidUsage, "call after abort",
               "not a live communicator");
  }
  printf("bad_input: %d failures\n", dropinFailures());
  return dropinFailures() ? 1 : 0;
}
