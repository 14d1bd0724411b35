/*
 * hetccl: one collective communicator over GPUs and CPUs of different vendors.
 *
 * The C API mirrors NCCL's (same semantics, same result/type/op values) under a `hetccl` prefix.
 * Ranks are grouped into domains (HETCCL_DOMAIN); inside a domain hetccl delegates to the vendor
 * library where there is one, between domains it moves the bytes itself.
 *
 * Errors: every function returns a hetcclResult_t; hetcclGetLastError() gives a message saying what
 * failed and where. A call that fails validation changes nothing. A failure of a peer (death, closed
 * connection, missed HETCCL_TIMEOUT) returns hetcclRemoteError naming the peer, and the communicator
 * is then unusable: destroy or abort it.
 *
 * Threading: a communicator may be used from one thread at a time; hetcclCommAbort and
 * hetcclCommGetAsyncError may be called from any thread at any time.
 *
 * In this build collectives run on host memory (CPU ranks); device pointers are a later addition.
 * Calls on host buffers complete before returning (the stream argument is accepted and ignored).
 */
#ifndef HETCCL_HETCCL_H_
#define HETCCL_HETCCL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HETCCL_API __attribute__((visibility("default")))
#else
#define HETCCL_API
#endif

#define HETCCL_MAJOR 0
#define HETCCL_MINOR 1
#define HETCCL_PATCH 0
/** Encoded as NCCL does: major*10000 + minor*100 + patch. */
#define HETCCL_VERSION_CODE (HETCCL_MAJOR * 10000 + HETCCL_MINOR * 100 + HETCCL_PATCH)

/* In C++ the enums get int as their fixed underlying type, so any int a C caller passes is a valid
 * value of the enum (hetccl then rejects unknown ones with hetcclInvalidArgument). Same size and values
 * in C and C++. */
#if defined(__cplusplus)
#define HETCCL_ENUM_INT : int
#else
#define HETCCL_ENUM_INT
#endif

/** Opaque communicator. */
typedef struct hetcclComm* hetcclComm_t;
/** Stream handle (cudaStream_t / hipStream_t); ignored for host buffers. */
typedef void* hetcclStream_t;

#define HETCCL_UNIQUE_ID_BYTES 128
/** Created by one rank (hetcclGetUniqueId) and given to every rank out of band. Holds the root's
 *  address and a random per-job secret: treat it as a credential. */
typedef struct {
  char internal[HETCCL_UNIQUE_ID_BYTES];
} hetcclUniqueId;

/** Result codes (values of ncclResult_t). */
typedef enum HETCCL_ENUM_INT {
  hetcclSuccess = 0,
  hetcclUnhandledCudaError = 1,
  hetcclSystemError = 2,
  hetcclInternalError = 3,
  hetcclInvalidArgument = 4,
  hetcclInvalidUsage = 5,
  hetcclRemoteError = 6,
  hetcclInProgress = 7,
  hetcclNumResults = 8
} hetcclResult_t;

/** Element types (values of ncclDataType_t). */
typedef enum HETCCL_ENUM_INT {
  hetcclInt8 = 0, hetcclChar = 0,
  hetcclUint8 = 1,
  hetcclInt32 = 2, hetcclInt = 2,
  hetcclUint32 = 3,
  hetcclInt64 = 4,
  hetcclUint64 = 5,
  hetcclFloat16 = 6, hetcclHalf = 6,
  hetcclFloat32 = 7, hetcclFloat = 7,
  hetcclFloat64 = 8, hetcclDouble = 8,
  hetcclBfloat16 = 9,
  hetcclFloat8e4m3 = 10, /**< OCP FP8 E4M3; reductions as NCCL 2.28 (docs/DESIGN.md, "fp8 reductions") */
  hetcclFloat8e5m2 = 11, /**< OCP FP8 E5M2 */
  hetcclNumTypes = 12
} hetcclDataType_t;

/** Reduction operators (values of ncclRedOp_t). Values >= hetcclNumOps come from
 *  hetcclRedOpCreatePreMulSum. Avg divides the sum by the number of ranks (integers: truncating). */
typedef enum HETCCL_ENUM_INT {
  hetcclSum = 0,
  hetcclProd = 1,
  hetcclMax = 2,
  hetcclMin = 3,
  hetcclAvg = 4,
  hetcclNumOps = 5,
  hetcclMaxRedOp = 0x7fffffff
} hetcclRedOp_t;

/** Where the PreMulSum scalar lives (ncclScalarResidence_t). */
typedef enum HETCCL_ENUM_INT { hetcclScalarDevice = 0, hetcclScalarHostImmediate = 1 } hetcclScalarResidence_t;

#define HETCCL_CONFIG_UNDEF_INT INT32_MIN
#define HETCCL_SPLIT_NOCOLOR -1

/** Communicator options (the fields of ncclConfig_t that hetccl honours). Initialise with
 *  HETCCL_CONFIG_INITIALIZER; unset fields take defaults. */
typedef struct {
  size_t size;          /**< sizeof(hetcclConfig_t), set by the initializer */
  unsigned int magic;   /**< set by the initializer */
  unsigned int version; /**< set by the initializer */
  int blocking;         /**< 1 (default): init/finalize block; 0: they return hetcclInProgress */
  int cgaClusterSize;   /**< accepted, ignored */
  int minCTAs;          /**< accepted, ignored */
  int maxCTAs;          /**< accepted, ignored */
  const char* netName;  /**< "tcp" or "shm" forces a transport; NULL: automatic */
  int splitShare;       /**< accepted, ignored */
} hetcclConfig_t;

#define HETCCL_CONFIG_MAGIC 0xcafebeefu
#define HETCCL_CONFIG_INITIALIZER                                                                   \
  {                                                                                                 \
    sizeof(hetcclConfig_t), HETCCL_CONFIG_MAGIC, HETCCL_VERSION_CODE, HETCCL_CONFIG_UNDEF_INT,      \
        HETCCL_CONFIG_UNDEF_INT, HETCCL_CONFIG_UNDEF_INT, HETCCL_CONFIG_UNDEF_INT, NULL,            \
        HETCCL_CONFIG_UNDEF_INT                                                                     \
  }

/* ---- library ---------------------------------------------------------------------------------- */

/** Writes HETCCL_VERSION_CODE. */
HETCCL_API hetcclResult_t hetcclGetVersion(int* version);
/** Fixed text for a result code. */
HETCCL_API const char* hetcclGetErrorString(hetcclResult_t result);
/** Message of the last failed call on this thread (or of the communicator's async error). */
HETCCL_API const char* hetcclGetLastError(hetcclComm_t comm);

/* ---- communicators ---------------------------------------------------------------------------- */

/** Creates a unique id and starts the rendezvous listener (HETCCL_COMM_ID picks the address). Call on
 *  one rank, give the bytes to all ranks. */
HETCCL_API hetcclResult_t hetcclGetUniqueId(hetcclUniqueId* uniqueId);
/** Joins communicator `commId` as `rank` of `nranks`. Blocks until every rank has joined or
 *  HETCCL_TIMEOUT passes. */
HETCCL_API hetcclResult_t hetcclCommInitRank(hetcclComm_t* comm, int nranks, hetcclUniqueId commId, int rank);
/** As hetcclCommInitRank, with options. */
HETCCL_API hetcclResult_t hetcclCommInitRankConfig(hetcclComm_t* comm, int nranks, hetcclUniqueId commId, int rank,
                                                   hetcclConfig_t* config);
/** Creates `ndev` communicators in this process, one per rank, using threads internally. `devlist` is
 *  ignored for host ranks (may be NULL). */
HETCCL_API hetcclResult_t hetcclCommInitAll(hetcclComm_t* comms, int ndev, const int* devlist);
/** Splits `comm` by color (HETCCL_SPLIT_NOCOLOR: no new comm, *newcomm = NULL); rank order by key,
 *  then old rank. Collective over `comm`. */
HETCCL_API hetcclResult_t hetcclCommSplit(hetcclComm_t comm, int color, int key, hetcclComm_t* newcomm,
                                          hetcclConfig_t* config);
/** Completes outstanding work; after it the communicator may only be destroyed. */
HETCCL_API hetcclResult_t hetcclCommFinalize(hetcclComm_t comm);
/** Frees the communicator (finalizing it first if needed). */
HETCCL_API hetcclResult_t hetcclCommDestroy(hetcclComm_t comm);
/** Stops every wait of the communicator promptly (from any thread) and frees it. */
HETCCL_API hetcclResult_t hetcclCommAbort(hetcclComm_t comm);
/** hetcclSuccess, or the error that made the communicator unusable (e.g. a peer died). */
HETCCL_API hetcclResult_t hetcclCommGetAsyncError(hetcclComm_t comm, hetcclResult_t* asyncError);
HETCCL_API hetcclResult_t hetcclCommCount(const hetcclComm_t comm, int* count);
/** Device ordinal of the rank; -1 for host ranks. */
HETCCL_API hetcclResult_t hetcclCommCuDevice(const hetcclComm_t comm, int* device);
HETCCL_API hetcclResult_t hetcclCommUserRank(const hetcclComm_t comm, int* rank);

/* ---- reduction operators ---------------------------------------------------------------------- */

/** Creates op(x) = sum over ranks of (scalar_rank * x_rank). Host-immediate scalars only in this
 *  build (hetcclScalarDevice returns hetcclInvalidUsage). */
HETCCL_API hetcclResult_t hetcclRedOpCreatePreMulSum(hetcclRedOp_t* op, void* scalar, hetcclDataType_t datatype,
                                                     hetcclScalarResidence_t residence, hetcclComm_t comm);
HETCCL_API hetcclResult_t hetcclRedOpDestroy(hetcclRedOp_t op, hetcclComm_t comm);

/* ---- collectives (NCCL semantics; counts are elements) ---------------------------------------- */

HETCCL_API hetcclResult_t hetcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          hetcclDataType_t datatype, hetcclRedOp_t op, hetcclComm_t comm,
                                          hetcclStream_t stream);
HETCCL_API hetcclResult_t hetcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          hetcclDataType_t datatype, int root, hetcclComm_t comm,
                                          hetcclStream_t stream);
/** In-place broadcast (legacy NCCL name). */
HETCCL_API hetcclResult_t hetcclBcast(void* buff, size_t count, hetcclDataType_t datatype, int root,
                                      hetcclComm_t comm, hetcclStream_t stream);
HETCCL_API hetcclResult_t hetcclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       hetcclDataType_t datatype, hetcclRedOp_t op, int root, hetcclComm_t comm,
                                       hetcclStream_t stream);
/** recvbuff holds nranks * sendcount elements, rank r's at offset r * sendcount. */
HETCCL_API hetcclResult_t hetcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream);
/** sendbuff holds nranks * recvcount elements; rank r receives block r reduced. */
HETCCL_API hetcclResult_t hetcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                              hetcclDataType_t datatype, hetcclRedOp_t op, hetcclComm_t comm,
                                              hetcclStream_t stream);
/** Block p of sendbuff (count elements) goes to rank p; block p of recvbuff comes from rank p. */
HETCCL_API hetcclResult_t hetcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                         hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream);
/** Per-peer counts and displacements in elements (the counts must agree pairwise between ranks). */
HETCCL_API hetcclResult_t hetcclAlltoAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                          void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                          hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream);
HETCCL_API hetcclResult_t hetcclSend(const void* sendbuff, size_t count, hetcclDataType_t datatype, int peer,
                                     hetcclComm_t comm, hetcclStream_t stream);
HETCCL_API hetcclResult_t hetcclRecv(void* recvbuff, size_t count, hetcclDataType_t datatype, int peer,
                                     hetcclComm_t comm, hetcclStream_t stream);
/** Blocks until every rank has entered the barrier (no NCCL equivalent; convenience). */
HETCCL_API hetcclResult_t hetcclBarrier(hetcclComm_t comm, hetcclStream_t stream);

/* ---- groups ----------------------------------------------------------------------------------- */

/** Calls between GroupStart and GroupEnd are queued and run together at GroupEnd, in one schedule
 *  (any mix of collectives and send/recv, no deadlock). Groups nest. */
HETCCL_API hetcclResult_t hetcclGroupStart(void);
HETCCL_API hetcclResult_t hetcclGroupEnd(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HETCCL_HETCCL_H_
