// The part of NCCL's C ABI (also RCCL's) the adaptor calls, declared here so that hetccl includes no
// vendor header and links no vendor library. Types have NCCL's sizes and calling convention; the
// prototypes are declared, never defined: they exist only for `decltype(&abi::ncclX)` in the function
// table (src/domain/nccl/nccl_library.hpp), and live in a C++ namespace so they cannot collide with the
// extern "C" ncclX symbols of hetccl's own drop-in build.
#pragma once

#include <cstddef>

namespace hetccl::domain::nccl::abi {

/// ncclResult_t (values as hetccl::Result and as NCCL).
enum ncclResult_t : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};

using ncclDataType_t = int;  ///< a C enum: passed as an int; values as hetccl::DataType
using ncclRedOp_t = int;     ///< a C enum: passed as an int; Sum..Avg as hetccl::RedOpKind, >= 5 user ops
inline constexpr int ncclScalarHostImmediate = 1;  ///< ncclScalarResidence_t: scalar read at creation

struct ncclComm;                       ///< opaque
using ncclComm_t = ncclComm*;
struct ncclConfig;                     ///< opaque here: hetccl passes the caller's config through
using ncclConfig_t = ncclConfig;
using cudaStream_t = void*;            ///< also hipStream_t

inline constexpr size_t kUniqueIdBytes = 128;
struct ncclUniqueId {
  char internal[kUniqueIdBytes];
};
static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId is passed by value: its size is ABI");

// ---- prototypes (NCCL 2.x) ----
ncclResult_t ncclGetVersion(int* version);
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);
const char* ncclGetErrorString(ncclResult_t result);
const char* ncclGetLastError(ncclComm_t comm);  // optional (2.13+)

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config);  // optional (2.14+)
ncclResult_t ncclCommFinalize(ncclComm_t comm);            // optional (2.14+)
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);  // optional (2.4+)

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype, int residence,
                                      ncclComm_t comm);  // optional (2.11+), with ncclRedOpDestroy
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();

}  // namespace hetccl::domain::nccl::abi
