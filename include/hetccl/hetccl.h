/*
 * hetccl: one collective communicator over GPUs and CPUs of different vendors -- the C API reference.
 *
 * The API mirrors NCCL's (same semantics, same result/type/op values) under a `hetccl` prefix. Ranks
 * are grouped into domains (HETCCL_DOMAIN, default: the rank's device kind); inside a domain hetccl
 * delegates to the vendor library (NCCL for CUDA devices, RCCL for HIP devices) where there is one,
 * between domains it moves the bytes itself. A rank is a GPU rank when a GPU plugin (libhetccl-cuda.so,
 * libhetccl-hip.so) loads and sees a device (HETCCL_DEVICE: auto, host, cuda, hip; auto tries CUDA first,
 * HIP first in the drop-in librccl.so); it is then bound to the device current on the calling thread at
 * init, as with NCCL.
 *
 * Buffers and streams. Every collective and point-to-point call takes either device buffers (device or
 * managed memory of a GPU rank) or host buffers; one call, or one group, uses one kind (a mix is
 * hetcclInvalidArgument).
 *   - Device buffers: NCCL's stream semantics. The call validates its arguments, enqueues the operation
 *     on `stream` (NULL: the default stream) and returns at once; the operation starts when the stream
 *     reaches it, and work queued on the stream afterwards sees its result. Wait on the stream
 *     (cudaStreamSynchronize / hipStreamSynchronize, an event) before reading the output on the host. How the bytes move depends
 *     on the job's layout, chosen once at init (hetccl-info --comm prints it, HETCCL_DEBUG=INFO logs it):
 *     the vendor library on the caller's stream (every rank a GPU rank of one domain), the stream
 *     pipeline (GPU ranks of one host in several domains, optionally with the vendor library inside each
 *     domain) or staging through pinned host memory (GPU and CPU ranks mixed, several hosts;
 *     HETCCL_GPU_EXEC=staged). Calls may be captured into CUDA graphs except on the staged path, which
 *     refuses a capture with hetcclInvalidUsage (docs/DROP_IN.md, "CUDA graphs"). The device calls of one
 *     communicator must reach the device in the same order on every rank.
 *   - Host buffers: the call runs to completion on the host engine before it returns; `stream` is not
 *     used. This is the only kind a CPU rank has.
 *
 * Errors. Every function returns a hetcclResult_t; hetcclGetLastError() gives a message saying what
 * failed and where. A call that fails validation (hetcclInvalidArgument: null or overflowing buffers,
 * ranks or roots out of range, unknown types or operators) changes nothing and leaves the communicator
 * usable. A failure of a peer (death, closed connection, no progress within HETCCL_TIMEOUT seconds),
 * an abort, or a failure of work already enqueued makes the communicator unusable: every later call on
 * it returns that error (hetcclRemoteError for peers, naming the peer's rank and host), and
 * hetcclCommGetAsyncError reports it -- the way to learn that enqueued device work failed (its outputs
 * are then undefined; the streams are released, never left hanging). Destroy or abort it. Ranks that
 * call different collectives, counts, types or operators get an error instead of wrong data: the rank
 * that detects it names both calls and tells the others; the rank whose message it refused is not told
 * (a notice never blames its receiver) and fails when the detecting rank aborts or destroys its
 * communicator, or at HETCCL_TIMEOUT if that rank keeps it (docs/RELIABILITY.md); configuration variables that shape the traffic must be equal on every rank (init fails on
 * every rank otherwise, naming the variable).
 *
 * Threading: a communicator may be used from one thread at a time; hetcclCommAbort and
 * hetcclCommGetAsyncError may be called from any thread at any time.
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
/** Stream handle (cudaStream_t / hipStream_t) ordering calls on device buffers; not used for host
 *  buffers. NULL is the default stream. */
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
  int blocking;         /**< accepted; this API always blocks (the NCCL drop-in honours 0, docs/DROP_IN.md) */
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

/** Writes HETCCL_VERSION_CODE to *version. hetcclInvalidArgument when version is NULL. */
HETCCL_API hetcclResult_t hetcclGetVersion(int* version);
/** Fixed text for a result code (never NULL; "unknown result code" for values out of range). */
HETCCL_API const char* hetcclGetErrorString(hetcclResult_t result);
/** Message of the last failed call on this thread; when there is none and `comm` (may be NULL) has
 *  failed, the message of its failure; else "". Valid until the thread's next failing call. */
HETCCL_API const char* hetcclGetLastError(hetcclComm_t comm);

/* ---- communicators ---------------------------------------------------------------------------- */

/** Creates a unique id and starts the rendezvous listener on this process (HETCCL_COMM_ID picks its
 *  address, default: an ephemeral port on the interface HETCCL_SOCKET_IFNAME selects). Call on one
 *  rank and give the 128 bytes to every rank out of band. hetcclSystemError when no socket can be
 *  opened. */
HETCCL_API hetcclResult_t hetcclGetUniqueId(hetcclUniqueId* uniqueId);
/** Joins the communicator `commId` as `rank` of `nranks` (collective over all ranks). Blocks until
 *  every rank has joined, the links are up and the device path is set up, or HETCCL_TIMEOUT passes.
 *  A GPU rank is bound to the device current on the calling thread. On failure *comm is NULL:
 *  hetcclInvalidArgument (nranks < 1, rank outside [0, nranks), a malformed id or configuration value),
 *  hetcclInvalidUsage (ranks with different configuration variables that must agree, HETCCL_DEVICE=cuda
 *  without the CUDA plugin), hetcclRemoteError (a rank that failed or never came, named),
 *  hetcclSystemError (sockets, shared memory), hetcclUnhandledCudaError (the GPU runtime). */
HETCCL_API hetcclResult_t hetcclCommInitRank(hetcclComm_t* comm, int nranks, hetcclUniqueId commId, int rank);
/** As hetcclCommInitRank, with options (`config` may be NULL; else it must come from
 *  HETCCL_CONFIG_INITIALIZER: a bad magic or size is hetcclInvalidArgument). */
HETCCL_API hetcclResult_t hetcclCommInitRankConfig(hetcclComm_t* comm, int nranks, hetcclUniqueId commId, int rank,
                                                   hetcclConfig_t* config);
/** Creates `ndev` communicators of one job in this process, rank i in comms[i], one thread each. In this
 *  API `devlist` is not read (may be NULL): each rank binds to the device current on its own new thread
 *  (device 0); the NCCL drop-in's ncclCommInitAll honours devlist. When any rank fails, every
 *  communicator created is aborted and the first failure returned. */
HETCCL_API hetcclResult_t hetcclCommInitAll(hetcclComm_t* comms, int ndev, const int* devlist);
/** Splits `comm` (collective over every rank of it): ranks passing the same `color` form a new
 *  communicator, ordered by `key`, then by rank in `comm`. HETCCL_SPLIT_NOCOLOR takes part but gets
 *  *newcomm = NULL; another negative color is hetcclInvalidArgument. `config` as for
 *  hetcclCommInitRankConfig (NULL: defaults). The new communicator chooses its own device path. */
HETCCL_API hetcclResult_t hetcclCommSplit(hetcclComm_t comm, int color, int key, hetcclComm_t* newcomm,
                                          hetcclConfig_t* config);
/** Waits until the device work this communicator queued has finished (or was released after a
 *  failure), then for every rank to finalize (collective; skipped when the communicator already
 *  failed). Afterwards only hetcclCommDestroy may be called (other calls: hetcclInvalidUsage). */
HETCCL_API hetcclResult_t hetcclCommFinalize(hetcclComm_t comm);
/** Frees the communicator, finalizing it first when that was not done (which waits for the other
 *  ranks: a thread driving several ranks finalizes them in a group first). Calls still running on other
 *  threads finish first; one still running after HETCCL_TIMEOUT makes it abort instead
 *  (hetcclInvalidUsage). NULL is a no-op; a second destroy is hetcclInvalidUsage. */
HETCCL_API hetcclResult_t hetcclCommDestroy(hetcclComm_t comm);
/** From any thread: makes every wait of the communicator fail promptly (calls in flight return
 *  hetcclRemoteError, "aborted"), aborts its vendor communicators, releases its queued device work
 *  (outputs undefined) and frees it, without waiting for other ranks. NULL is a no-op. */
HETCCL_API hetcclResult_t hetcclCommAbort(hetcclComm_t comm);
/** From any thread: *asyncError = hetcclSuccess, or the error that made the communicator unusable (a
 *  peer died, enqueued device work failed, ranks called mismatched collectives, an asynchronous error
 *  of the vendor communicators it uses, which is then kept with a message naming the domain). Poll it
 *  to learn about failures of device work after the calls that queued it returned. */
HETCCL_API hetcclResult_t hetcclCommGetAsyncError(hetcclComm_t comm, hetcclResult_t* asyncError);
/** *count = number of ranks of the communicator. */
HETCCL_API hetcclResult_t hetcclCommCount(const hetcclComm_t comm, int* count);
/** *device = the device ordinal the rank is bound to; -1 for a CPU rank. */
HETCCL_API hetcclResult_t hetcclCommCuDevice(const hetcclComm_t comm, int* device);
/** *rank = this rank in the communicator. */
HETCCL_API hetcclResult_t hetcclCommUserRank(const hetcclComm_t comm, int* rank);

/* ---- reduction operators ---------------------------------------------------------------------- */

/** Creates the operator op(x) = sum over ranks of (scalar_rank * x_rank) for `datatype` on `comm`;
 *  *op is a handle >= hetcclNumOps, valid on this communicator with this type only. `scalar` points to
 *  one element of `datatype`, read now. Host-immediate scalars only in this build (hetcclScalarDevice is
 *  hetcclInvalidUsage). Every rank creates its own (with its own scalar). */
HETCCL_API hetcclResult_t hetcclRedOpCreatePreMulSum(hetcclRedOp_t* op, void* scalar, hetcclDataType_t datatype,
                                                     hetcclScalarResidence_t residence, hetcclComm_t comm);
/** Destroys an operator of hetcclRedOpCreatePreMulSum (calls already made with it are not affected);
 *  hetcclInvalidArgument for a built-in or unknown handle. */
HETCCL_API hetcclResult_t hetcclRedOpDestroy(hetcclRedOp_t op, hetcclComm_t comm);

/* ---- collectives (NCCL semantics; counts are elements) ----------------------------------------
 * Every rank of the communicator makes the same collective calls in the same order, with the same
 * count, type, operator and root. Buffers: device buffers are enqueued on `stream` and the call
 * returns at once; host buffers complete before the call returns (see the top of this file). In place
 * when sendbuff == recvbuff (for all-gather: sendbuff == recvbuff + rank * sendcount; for
 * reduce-scatter: recvbuff == sendbuff + rank * recvcount). Inside a group the call is only queued;
 * its errors, but validation's, are returned by hetcclGroupEnd. */

/** recvbuff[i] = op over ranks of sendbuff[i], for i < count, on every rank. */
HETCCL_API hetcclResult_t hetcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          hetcclDataType_t datatype, hetcclRedOp_t op, hetcclComm_t comm,
                                          hetcclStream_t stream);
/** recvbuff = the root's sendbuff (count elements) on every rank; sendbuff is read on the root only. */
HETCCL_API hetcclResult_t hetcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          hetcclDataType_t datatype, int root, hetcclComm_t comm,
                                          hetcclStream_t stream);
/** In-place broadcast (legacy NCCL name): hetcclBroadcast(buff, buff, ...). */
HETCCL_API hetcclResult_t hetcclBcast(void* buff, size_t count, hetcclDataType_t datatype, int root,
                                      hetcclComm_t comm, hetcclStream_t stream);
/** On the root, recvbuff = op over ranks of sendbuff (count elements); recvbuff is not written (and
 *  may be NULL) on other ranks. */
HETCCL_API hetcclResult_t hetcclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       hetcclDataType_t datatype, hetcclRedOp_t op, int root, hetcclComm_t comm,
                                       hetcclStream_t stream);
/** recvbuff holds nranks * sendcount elements, rank r's sendbuff at offset r * sendcount. */
HETCCL_API hetcclResult_t hetcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream);
/** sendbuff holds nranks * recvcount elements; rank r receives block r reduced over ranks. */
HETCCL_API hetcclResult_t hetcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                              hetcclDataType_t datatype, hetcclRedOp_t op, hetcclComm_t comm,
                                              hetcclStream_t stream);
/** Block p of sendbuff (count elements) goes to rank p; block p of recvbuff comes from rank p. */
HETCCL_API hetcclResult_t hetcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                         hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream);
/** As hetcclAlltoAll with per-peer counts and displacements in elements (arrays of nranks entries):
 *  sendcounts[p] elements at sdispls[p] go to rank p, recvcounts[p] from rank p land at rdispls[p].
 *  sendcounts[p] on this rank must equal recvcounts[this rank] on rank p. */
HETCCL_API hetcclResult_t hetcclAlltoAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                          void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                          hetcclDataType_t datatype, hetcclComm_t comm, hetcclStream_t stream);
/** Sends count elements to rank `peer`, matched by that rank's hetcclRecv from this rank, in call order
 *  per pair. Issue the sends and receives of an exchange in one group so that neither side blocks the
 *  other. Stream semantics as the collectives. */
HETCCL_API hetcclResult_t hetcclSend(const void* sendbuff, size_t count, hetcclDataType_t datatype, int peer,
                                     hetcclComm_t comm, hetcclStream_t stream);
/** Receives count elements from rank `peer` (see hetcclSend). */
HETCCL_API hetcclResult_t hetcclRecv(void* recvbuff, size_t count, hetcclDataType_t datatype, int peer,
                                     hetcclComm_t comm, hetcclStream_t stream);
/** Blocks the calling thread until every rank has entered the barrier (no NCCL equivalent; a small
 *  host all-reduce). `stream` is not used: device work already queued is not waited for. Not allowed
 *  inside a group (hetcclInvalidUsage). */
HETCCL_API hetcclResult_t hetcclBarrier(hetcclComm_t comm, hetcclStream_t stream);

/* ---- groups ----------------------------------------------------------------------------------- */

/** Calls between GroupStart and the matching GroupEnd are validated at once and queued; the outermost
 *  GroupEnd runs them, each communicator's calls as one schedule (any mix of collectives and send/recv,
 *  no deadlock). Groups nest. With device buffers, a communicator's group is enqueued on the stream of
 *  its first call. Several communicators in one group (one thread driving several ranks) run
 *  concurrently. */
HETCCL_API hetcclResult_t hetcclGroupStart(void);
/** Ends a group (hetcclInvalidUsage without a matching start); the outermost one runs (host buffers)
 *  or enqueues (device buffers) what was queued and returns the first failure; the queue is emptied
 *  either way. */
HETCCL_API hetcclResult_t hetcclGroupEnd(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HETCCL_HETCCL_H_
