/*
 * hetccl RMA: registered memory, descriptors, one-sided put/get and ordered notifications -- the C API.
 *
 * The pattern of inference engines moving KV caches (NIXL, Mooncake): every rank registers the buffers
 * peers may access, exports an opaque descriptor per registration and gives it to the peers out of band
 * (any channel: a key-value store, a collective, a file); a peer imports it and then reads (get) or
 * writes (put) ranges of it without the owner taking part, and tells the owner with a tagged
 * notification that the data is there.
 *
 * Guarantees.
 *   - Ordering: a notification from rank A arrives at rank B only after the data of every put A issued
 *     to B before the hetcclNotify call is in place at B (visible to B's host; device memory: copied in
 *     by a synchronous copy). Puts from A to B are applied at B in issue order, so a later put to the
 *     same bytes wins. No ordering between different source ranks.
 *   - Completion: a put request is done once its data is in place at the target (the target
 *     acknowledged it); a get request once the data is in the local buffer.
 *   - Safety: descriptors are versioned and authenticated (HMAC-SHA256 with a key derived from the job's
 *     secret, bound to the communicator): a descriptor of another job or communicator, a tampered or
 *     truncated one, is rejected at import (hetcclInvalidArgument). A deregistered region is "stale":
 *     accesses to it fail (hetcclInvalidArgument at the initiator, naming the peer and the reason) and
 *     never write it. Ranges are checked against the local registration at the call and against the
 *     remote registration at the target; the target's memory is never written outside a region.
 *   - Failure: every wait has a deadline (HETCCL_TIMEOUT seconds from the issue of a request). A dead or
 *     unresponsive peer fails the requests to it with hetcclRemoteError and a message naming its rank and
 *     host, never a hang; later calls towards it fail at once the same way.
 *
 * Transport. RMA has connections of its own (never interleaved with collective traffic), chosen as the
 * communicator's: shared memory between ranks of one host, tcp between hosts (HETCCL_TRANSPORT or the
 * config's netName forces one). A progress thread per communicator serves incoming puts, gets and
 * notifications; it starts at hetcclRmaInit. Device memory (CUDA or HIP memory of the rank's GPU) is
 * staged through pinned host memory on the rank that owns it.
 *
 * Errors: as in hetccl.h -- every function returns a hetcclResult_t and hetcclGetLastError(comm) gives
 * the message. Bad arguments (null pointers, ranges outside a registration, released or foreign
 * handles, handles of another communicator) are hetcclInvalidArgument and change nothing. Handles are
 * looked up in a table: using a released handle is detected (hetcclInvalidArgument), never undefined
 * behaviour.
 *
 * Threading: every function may be called from any thread, also concurrently (requests, registrations
 * and notifications are thread-safe). Puts and notifications to one peer are ordered by the order in
 * which their calls returned.
 *
 * Lifetime: hetcclCommFinalize / hetcclCommDestroy / hetcclCommAbort stop the progress thread; requests
 * still pending fail (hetcclRemoteError, "finalized" / "aborted"); handles of the communicator become
 * invalid (their calls return hetcclInvalidArgument or hetcclInvalidUsage), but each must still be
 * released/freed by its function to free its memory. Finalize is collective: a rank should have waited
 * for its requests and seen the notifications it needs before it finalizes.
 */
#ifndef HETCCL_HETCCL_RMA_H_
#define HETCCL_HETCCL_RMA_H_

#include <stddef.h>
#include <stdint.h>

#include "hetccl/hetccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A local registration (hetcclMemRegister). */
typedef struct hetcclRmaMem* hetcclMem_t;
/** An imported registration of a peer (hetcclMemImport). */
typedef struct hetcclRmaRemote* hetcclRemoteMem_t;
/** One put/get (or batch) in flight. */
typedef struct hetcclRmaRequest* hetcclRequest_t;

#define HETCCL_MEM_DESC_BYTES 128
/** Describes one registration to peers: versioned, authenticated, opaque. Plain bytes: copy it, send it
 *  anywhere; it holds no secret and no address (offsets are relative to the registration). */
typedef struct {
  unsigned char bytes[HETCCL_MEM_DESC_BYTES];
} hetcclMemDesc_t;

/** One range of a batch: `bytes` bytes from localOffset of the local registration to (put) or from
 *  (get) remoteOffset of the remote one. */
typedef struct {
  size_t localOffset;
  size_t remoteOffset;
  size_t bytes;
} hetcclRmaRange_t;

/** Memory kinds (values are part of the descriptor). */
typedef enum HETCCL_ENUM_INT { hetcclMemHost = 0, hetcclMemCuda = 1, hetcclMemHip = 2 } hetcclMemKind_t;

/* ---- set-up ----------------------------------------------------------------------------------- */

/** Collective over every rank of `comm`, once per communicator: opens the RMA connections and starts
 *  the progress thread. Every other function of this header needs it (hetcclInvalidUsage before it).
 *  A second call is hetcclInvalidUsage. Errors as hetcclCommInitRank's (peers named). */
HETCCL_API hetcclResult_t hetcclRmaInit(hetcclComm_t comm);

/* ---- registration ----------------------------------------------------------------------------- */

/** Registers [buf, buf + bytes) for remote access through `comm`. The kind is detected: host memory,
 *  or device memory of this rank's GPU (CUDA or HIP; managed memory counts as device memory). Regions
 *  may overlap. `bytes` must be > 0. The memory must stay allocated until hetcclMemDeregister. */
HETCCL_API hetcclResult_t hetcclMemRegister(hetcclComm_t comm, void* buf, size_t bytes, hetcclMem_t* mem);
/** Ends a registration: later remote accesses to it fail at their initiator as stale (never write it);
 *  a remote put being written into it right now finishes first (this call waits for it, at most
 *  HETCCL_TIMEOUT). Local requests still using it: hetcclInvalidUsage (wait for them first), nothing
 *  changed. Safe against puts/gets issued concurrently on other threads: each either holds the
 *  registration first (then this call is refused) or is refused itself (hetcclInvalidArgument); once this
 *  call returned success no transfer of it runs or starts. Device memory that peers of this host copied through IPC mappings (HETCCL_RMA_IPC): the call
 *  also waits (at most HETCCL_TIMEOUT) until each of those peers closed its mapping of the allocation,
 *  so the memory may be freed when it returns; a peer that does not confirm (dead, hung) makes it return
 *  hetcclRemoteError naming that peer -- the registration has ended and the handle is released all the
 *  same, but the allocation must not be freed while that peer may still map it. Otherwise, on success the
 *  handle is released. NULL: hetcclInvalidArgument. */
HETCCL_API hetcclResult_t hetcclMemDeregister(hetcclMem_t mem);
/** Writes the descriptor of `mem` (the same bytes on every call). */
HETCCL_API hetcclResult_t hetcclMemExport(hetcclMem_t mem, hetcclMemDesc_t* desc);
/** *kind = the detected memory kind of `mem`; *bytes (may be NULL) = its size. */
HETCCL_API hetcclResult_t hetcclMemQuery(hetcclMem_t mem, hetcclMemKind_t* kind, size_t* bytes);
/** Imports a peer's descriptor. Validates (hetcclInvalidArgument, saying which check failed): the magic
 *  and version, the HMAC (rejects another job's, another communicator's, or altered bytes), the owner
 *  rank (in range, not this rank: local memory needs no RMA). The owner may have deregistered it since:
 *  that is found at the first access (stale). */
HETCCL_API hetcclResult_t hetcclMemImport(hetcclComm_t comm, const hetcclMemDesc_t* desc, hetcclRemoteMem_t* remote);
/** *rank = the owner of `remote`; *bytes (may be NULL) = the size of its registration. */
HETCCL_API hetcclResult_t hetcclRemoteMemQuery(hetcclRemoteMem_t remote, int* rank, size_t* bytes);
/** Releases an imported handle (requests already issued with it are not affected). */
HETCCL_API hetcclResult_t hetcclRemoteMemRelease(hetcclRemoteMem_t remote);

/* ---- one-sided transfers -----------------------------------------------------------------------
 * Non-blocking: each call checks its arguments (local range within `local`, remote range within the
 * size the descriptor states, both handles of the same communicator), queues the transfer and returns a
 * request in *req. The local buffer must not be changed (put) or read (get) until the request is done.
 * bytes == 0 (or n == 0) gives a request that is done at once. The target checks the range again
 * against its live registration: a stale region or a range outside it fails the request
 * (hetcclInvalidArgument, message naming the target rank and the reason) and writes nothing. */

/** Writes `bytes` bytes from local+localOffset to remote+remoteOffset. */
HETCCL_API hetcclResult_t hetcclPut(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote,
                                    size_t remoteOffset, size_t bytes, hetcclRequest_t* req);
/** Reads `bytes` bytes from remote+remoteOffset into local+localOffset. */
HETCCL_API hetcclResult_t hetcclGet(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote,
                                    size_t remoteOffset, size_t bytes, hetcclRequest_t* req);
/** n puts as one request (one message header and one acknowledgement; ranges adjacent on both sides are
 *  merged, small ranges are packed into few transport messages). The ranges are applied in order (a
 *  later range to the same remote bytes wins). Any invalid range rejects the whole call. At most
 *  4,194,304 ranges after merging (the wire protocol's limit), and their sizes must add up to less than
 *  2^64: more is hetcclInvalidArgument at the call, nothing queued (as for every request the target
 *  would refuse as malformed). */
HETCCL_API hetcclResult_t hetcclPutBatch(hetcclMem_t local, hetcclRemoteMem_t remote, const hetcclRmaRange_t* ranges,
                                         size_t n, hetcclRequest_t* req);
/** n gets as one request (see hetcclPutBatch). Local ranges should not overlap (the last one wins). */
HETCCL_API hetcclResult_t hetcclGetBatch(hetcclMem_t local, hetcclRemoteMem_t remote, const hetcclRmaRange_t* ranges,
                                         size_t n, hetcclRequest_t* req);

/* ---- stream-ordered transfers -----------------------------------------------------------------
 * hetcclPutOnStream / hetcclGetOnStream / hetcclNotifyOnStream queue the operation on a GPU stream of
 * this rank (a cudaStream_t / hipStream_t of its device; NULL: the default stream) and return at once;
 * there is no request.
 *   - Start: the operation starts once `stream` reaches it, i.e. after every operation queued on the
 *     stream before the call is complete (e.g. the kernel that wrote the KV block). The call queues a flag
 *     write ("reached") on the stream, then a flag wait ("done"); the RMA progress thread sees "reached"
 *     (it polls, ~20 us apart) and issues the transfer exactly like hetcclPut/hetcclGet issued at that
 *     moment (same checks at the target, same per-peer order, same HETCCL_TIMEOUT from that moment).
 *   - Completion: work queued on `stream` after the call starts only once the transfer is complete: a
 *     put's data is in place at the target (acknowledged), a get's data is in the local buffer.
 *   - Ordering. A stream-ordered put or notification enters the per-peer order of "Ordering" above when
 *     the stream reaches it, not at the call. Hence: hetcclNotifyOnStream queued on the same stream after
 *     a hetcclPutOnStream is delivered after that put's data (and after every put to that peer the host
 *     issued before the stream reached the notification); it does not hold the stream. A host hetcclNotify
 *     is ordered after a stream-ordered put only if the stream had reached the put when hetcclNotify was
 *     called -- guaranteed once the host has seen work queued after the put complete (stream or event
 *     synchronisation; the put is then complete anyway), NOT merely because hetcclPutOnStream returned.
 *     Operations of one stream start in the order they were queued; operations on different streams (and
 *     host calls) are ordered only by when their streams reach them.
 *   - Failure: the stream is never left waiting. A transfer that fails (refused by the target: stale
 *     region or range; peer dead or not answering within HETCCL_TIMEOUT; the stream not reaching it within
 *     HETCCL_TIMEOUT of the call), and every operation still queued when the communicator is aborted,
 *     finalized or destroyed, is released: later work on the stream runs, the destination's bytes are
 *     undefined. The failure becomes the communicator's asynchronous error (hetcclCommGetAsyncError, its
 *     message naming the peer's rank and host; sticky, as for any failed enqueued work), reported before
 *     the stream is released -- except after hetcclCommAbort (then released only). A failure found at the
 *     call (bad arguments, a peer already known dead, the runtime refusing to queue) is returned by the
 *     call and queues nothing that waits.
 *   - Refused with hetcclInvalidUsage, nothing queued: on a rank without a GPU (host-memory-only rank:
 *     there is no stream; use hetcclPut/hetcclGet), and while `stream` is being captured into a CUDA/HIP
 *     graph (the progress thread would not take part in replays).
 *   - The local registration may be device or host memory; it counts as in use (hetcclMemDeregister:
 *     hetcclInvalidUsage) until the transfer ended. bytes == 0 (a batch whose ranges are all empty, or
 *     n == 0): nothing is queued.
 * Cost: three stream memory operations per transfer (or the polling kernel where the device has none),
 * one pinned 64-byte slot per operation in flight, and the ~20 us polling while any is pending. */

/** Writes `bytes` bytes from local+localOffset to remote+remoteOffset once `stream` gets there; later
 *  work on `stream` waits until they are in place at the target. Arguments as hetcclPut. */
HETCCL_API hetcclResult_t hetcclPutOnStream(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote,
                                            size_t remoteOffset, size_t bytes, hetcclStream_t stream);
/** Reads `bytes` bytes from remote+remoteOffset into local+localOffset once `stream` gets there; later
 *  work on `stream` waits until they are in the local buffer. Arguments as hetcclGet. */
HETCCL_API hetcclResult_t hetcclGetOnStream(hetcclMem_t local, size_t localOffset, hetcclRemoteMem_t remote,
                                            size_t remoteOffset, size_t bytes, hetcclStream_t stream);
/** n stream-ordered puts as one transfer (ranges as hetcclPutBatch: any invalid range rejects the whole
 *  call and queues nothing): starts once `stream` gets there, later work on `stream` waits until every
 *  range is in place at the target. One set of stream operations for the whole batch. */
HETCCL_API hetcclResult_t hetcclPutBatchOnStream(hetcclMem_t local, hetcclRemoteMem_t remote,
                                                 const hetcclRmaRange_t* ranges, size_t n, hetcclStream_t stream);
/** n stream-ordered gets as one transfer (see hetcclPutBatchOnStream and hetcclGetBatch): later work on
 *  `stream` sees every range in the local registration. */
HETCCL_API hetcclResult_t hetcclGetBatchOnStream(hetcclMem_t local, hetcclRemoteMem_t remote,
                                                 const hetcclRmaRange_t* ranges, size_t n, hetcclStream_t stream);
/** Sends notification `tag` to `peer` once `stream` gets there (see "Ordering" above: after the data of
 *  every stream-ordered put queued before it on `stream`). Does not hold the stream. Arguments and
 *  errors as hetcclNotify; a peer that fails before the stream gets there: the asynchronous error. */
HETCCL_API hetcclResult_t hetcclNotifyOnStream(hetcclComm_t comm, int peer, uint64_t tag, hetcclStream_t stream);

/* ---- requests --------------------------------------------------------------------------------- */

/** Never blocks. *done = 1 once the request succeeded (put: data in place at the target; get: data in
 *  the local buffer), 0 while pending. A failed request returns its error (every later Test/Wait again)
 *  with the message naming the peer and the reason. */
HETCCL_API hetcclResult_t hetcclRequestTest(hetcclRequest_t req, int* done);
/** Blocks until the request is done or failed (returned as in hetcclRequestTest); a request not done by
 *  HETCCL_TIMEOUT after its issue fails with hetcclRemoteError naming the peer (the RMA channel to that
 *  peer is then closed: later transfers to it fail at once). */
HETCCL_API hetcclResult_t hetcclRequestWait(hetcclRequest_t req);
/** Frees a finished (done or failed) request. A pending one: hetcclInvalidUsage, nothing changed (its
 *  buffers are still in use). NULL: hetcclInvalidArgument. */
HETCCL_API hetcclResult_t hetcclRequestFree(hetcclRequest_t req);

/* ---- notifications ---------------------------------------------------------------------------- */

/** Queues a notification `tag` to rank `peer` and returns. It is delivered after the data of every put
 *  this rank issued to `peer` before this call (see "Ordering" above), whether or not those requests
 *  were waited for. peer == this rank or out of range: hetcclInvalidArgument. A failed peer:
 *  hetcclRemoteError. A notification lost because the peer fails afterwards is not reported here (the
 *  earlier puts' requests report it). */
HETCCL_API hetcclResult_t hetcclNotify(hetcclComm_t comm, int peer, uint64_t tag);
/* Received notifications wait in a queue indexed by sender and tag: Poll and Wait cost O(1) however
 * many are queued. At most HETCCL_RMA_NOTIFY_QUEUE (default 1,048,576; 1K..16M; about 100 bytes each)
 * are held per communicator; when it is full, the rank reads nothing more from a sender with another
 * notification until some are taken (back-pressure, logged once at WARN: that sender's later puts and
 * notifications wait, and its requests fail at HETCCL_TIMEOUT if nothing is taken), and a
 * hetcclNotifyWait that times out meanwhile says the queue is full. */

/** Never blocks: takes the oldest notification received (FIFO per sender; across senders in arrival
 *  order). *received = 1 and *peer, *tag set; or *received = 0 (peer and tag unchanged). */
HETCCL_API hetcclResult_t hetcclNotifyPoll(hetcclComm_t comm, int* peer, uint64_t* tag, int* received);
/** Waits for a notification from `peer` with `tag` and takes it (other notifications stay queued, in
 *  order). timeoutMs: 0 checks once, > 0 waits that long, -1 waits HETCCL_TIMEOUT. Not there in time:
 *  hetcclInProgress (nothing taken; call again). `peer` failed (dead, finalized) and nothing matching
 *  queued: hetcclRemoteError naming it. */
HETCCL_API hetcclResult_t hetcclNotifyWait(hetcclComm_t comm, int peer, uint64_t tag, int timeoutMs);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HETCCL_HETCCL_RMA_H_
