/* The NCCL API as a C test program sees a drop-in library: a table of function pointers resolved by name
 * from a dlopen handle (or from the process's global scope, as under LD_PRELOAD), plus small helpers
 * shared by the test programs of this folder. */
#ifndef HETCCL_TESTS_NCCL_ABI_DROPIN_API_H_
#define HETCCL_TESTS_NCCL_ABI_DROPIN_API_H_

#include "hetccl/nccl_abi.h"

#define DROPIN_API(X)                                                                                       \
  X(ncclGetVersion) X(ncclGetErrorString) X(ncclGetLastError) X(ncclGetUniqueId) X(ncclCommInitRank)      \
  X(ncclCommInitRankConfig) X(ncclCommInitRankScalable) X(ncclCommInitAll) X(ncclCommSplit)                \
  X(ncclCommShrink) X(ncclCommFinalize) X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommGetAsyncError)       \
  X(ncclCommCount) X(ncclCommCuDevice) X(ncclCommUserRank) X(ncclCommRegister) X(ncclCommDeregister)       \
  X(ncclCommWindowRegister) X(ncclMemAlloc) X(ncclMemFree) X(ncclRedOpCreatePreMulSum) X(ncclRedOpDestroy) \
  X(ncclReduce) X(ncclBcast) X(ncclBroadcast) X(ncclAllReduce) X(ncclReduceScatter) X(ncclAllGather)       \
  X(ncclAlltoAll) X(ncclGather) X(ncclScatter) X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd)  \
  X(ncclGroupSimulateEnd) X(ncclDevCommCreate) X(ncclTeamWorld) X(ncclTeamLsa) X(ncclTeamRankToWorld)

typedef struct {
#define DROPIN_FIELD(name) __typeof__(name)* name;
  DROPIN_API(DROPIN_FIELD)
#undef DROPIN_FIELD
  /* RCCL's extras: NULL when the library does not export them. */
  __typeof__(ncclAllToAll)* ncclAllToAll;
  __typeof__(ncclAllToAllv)* ncclAllToAllv;
  void* handle; /* dlopen handle; NULL when resolved from the global scope */
} DropinApi;

/* Opens `path` with RTLD_NOW | `mode` and resolves the table; path NULL: resolves from the global scope
 * (the library must be LD_PRELOADed). Exits with a message when the library or a name is missing. */
void dropinLoad(DropinApi* api, const char* path, int mode);

/* Prints "FAIL: <what>" with the library's last error and counts the failure. */
void dropinFail(const DropinApi* api, const char* what);
/* Checks that a call returned `want`; on failure prints what, the result and the last error. */
void dropinExpect(const DropinApi* api, ncclResult_t got, ncclResult_t want, const char* what);
/* Checks that the last error contains `part`. */
void dropinExpectMessage(const DropinApi* api, const char* part, const char* what);
/* Number of failures so far. */
int dropinFailures(void);

/* The launcher's view (hetccl-run): HETCCL_RANK, HETCCL_NRANKS, HETCCL_UNIQUE_ID (256 hex digits).
 * Exits with a message when a variable is missing or garbled. */
void dropinLaunchEnv(int* rank, int* nranks, ncclUniqueId* id);

#endif /* HETCCL_TESTS_NCCL_ABI_DROPIN_API_H_ */
