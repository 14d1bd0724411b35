/*
 * hetccl agents: transfers between independent processes, without a communicator -- the C API.
 *
 * Disaggregated serving (prefill and decode engines that start, scale and die on their own) moves KV
 * blocks between processes that never joined one job. An agent is this process's end of such transfers:
 * it registers memory, publishes an opaque metadata blob (how to reach it and what it registered), loads
 * the blobs of the peers it wants to reach (any channel: a key-value store, an HTTP side channel, a file),
 * and reads or writes lists of ranges of their registrations, optionally followed by a notification (a
 * byte string) that the peer picks up with hetcclAgentGetNotif. No collective call, no fixed world: a
 * peer may appear, leave or die at any time.
 *
 * Guarantees.
 *   - Authentication: every agent of a deployment holds the same secret (options.secret, else
 *     HETCCL_SECRET's hex digits decoded to bytes -- so HETCCL_SECRET=00ff... and options.secret =
 *     {0x00, 0xff, ...} are the same secret; docs/SECURITY.md says why a shared secret). Metadata blobs carry an HMAC-SHA256
 *     under a key derived from it: a blob of another deployment, a forged or altered one is refused at
 *     load (hetcclInvalidArgument, saying which check failed). Connections prove the secret both ways
 *     (challenge-response) before any request is served, and the agent answering must be the incarnation
 *     the blob describes: a blob of an agent that restarted since is "stale" (the transfer fails naming
 *     the peer, nothing is written).
 *   - Ordering: the transfers and notifications from agent A to agent B run one after another in the
 *     order they were posted. A notification attached to a write is delivered at B only after every
 *     byte of that write (and of A's earlier writes to B) is in place at B; one attached to a read is
 *     delivered after the reader has all the data (B learns that it may reuse the blocks). A plain
 *     hetcclAgentGenNotif is delivered after the transfers A posted to B before it.
 *   - Bounds: ranges are checked against the local registration at prepare and post, and against the
 *     remote registration at the target before any byte of it is written or read; a deregistered region
 *     is stale (never aliased: a region id is reused only with a new generation).
 *   - Failure: every transfer has a deadline (post time + options.timeoutSeconds, default HETCCL_TIMEOUT).
 *     How a transfer ends (hetcclAgentCheckXfer / WaitXfer), the message always naming the peer agent and
 *     its address: hetcclRemoteError when the peer is dead, unreachable, silent past the deadline, or not
 *     the incarnation its blob describes (it restarted: "stale metadata"); hetcclInvalidArgument when the
 *     peer refused a range (its region was deregistered -- "stale" -- or the range lies outside it):
 *     nothing of it was written there. Transfers to other peers continue. The next post to that peer
 *     connects again (a peer that restarted must be loaded again: its new blob replaces the old one).
 *
 *     Order: the transfers posted to one peer reach it in post order (its data and notifications land in
 *     that order). Writes and notifications are pipelined: up to 32 of them are sent before their answers
 *     come back, so many small writes to one peer cost one round trip, not one each; a read waits until
 *     every earlier transfer to that peer was answered. A failure other than a refusal (the peer died, a
 *     deadline) closes the connection and fails, besides the transfer it happened in, the ones already sent
 *     to that peer and not yet answered (hetcclRemoteError; they may have taken effect there).
 *
 * Paths. Between agents of one host (same host identity, HETCCL_HOST_ID overrides it) the bytes move
 * through a pair of shared-memory windows per connection (HETCCL_AGENT_WINDOW=auto|off; geometry
 * HETCCL_RMA_WINDOW_SLOTS x HETCCL_RMA_WINDOW_BYTES; device memory copied in and out by the copy
 * engines), the connection's socket carrying only requests, answers and notifications; elsewhere over
 * that tcp connection, device memory staged through pinned host memory -- or, where HETCCL_UCX allows it
 * on both agents (auto: the host lists an RDMA device and libucp loads; on: libucp loads; off), over UCX
 * (RDMA with RDMA NICs), the socket then carrying requests, answers and notifications only. A transfer
 * whose every range is
 * device memory of one vendor on both sides of one host is copied device to device by the target instead
 * (HETCCL_AGENT_IPC=auto|off): the target maps the initiator's allocations with the vendor's IPC handles
 * (exported at registration) and runs the copies itself; where the runtime refuses, the window serves.
 * Not built yet: device memory handed to UCX directly (GPUDirect RDMA: it is staged through host memory).
 *
 * Errors: every function returns a hetcclResult_t; hetcclGetLastError(NULL) gives the calling thread's
 * last message. Bad arguments (null pointers, unknown names or region ids, ranges outside a
 * registration, released handles) are hetcclInvalidArgument and change nothing.
 *
 * Threading: every function may be called from any thread, also concurrently. An agent runs threads of
 * its own (one accepting connections, one per connected peer in each direction).
 */
#ifndef HETCCL_HETCCL_AGENT_H_
#define HETCCL_HETCCL_AGENT_H_

#include <stddef.h>
#include <stdint.h>

#include "hetccl/hetccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An agent (hetcclAgentCreate). */
typedef struct hetcclAgent* hetcclAgent_t;
/** A local registration of an agent. */
typedef struct hetcclAgentMem* hetcclAgentMem_t;
/** A prepared transfer: posted any number of times, one post at a time. */
typedef struct hetcclAgentXfer* hetcclAgentXfer_t;

/** Longest agent name, without the terminating NUL. */
#define HETCCL_AGENT_NAME_MAX 63
/** Largest notification message. */
#define HETCCL_AGENT_NOTIF_MAX 4096

typedef struct {
  /** Shared secret of the deployment (>= 16 bytes); NULL: HETCCL_SECRET (hex, >= 32 digits). */
  const void* secret;
  size_t secretBytes;
  /** "ip:port" to listen on (port 0: any free port); NULL or "": the interface HETCCL_SOCKET_IFNAME
   *  selects (else the first one that is up), any free port. */
  const char* listenAddress;
  /** GPU ordinal whose memory this agent registers (CUDA or HIP, HETCCL_DEVICE chooses the vendor);
   *  -1: host memory only, no GPU runtime is loaded. */
  int device;
  /** Deadline of every transfer and connection, seconds; <= 0: HETCCL_TIMEOUT. */
  double timeoutSeconds;
} hetcclAgentOptions_t;

/** Fills `options` with the defaults: secret NULL (HETCCL_SECRET is then read at hetcclAgentCreate), any
 *  address, host memory only (device -1), timeout 0 (HETCCL_TIMEOUT). */
HETCCL_API hetcclResult_t hetcclAgentOptionsInit(hetcclAgentOptions_t* options);

/* ---- agents ----------------------------------------------------------------------------------- */

/** Creates an agent named `name` (1..HETCCL_AGENT_NAME_MAX characters of [A-Za-z0-9._:-]) and starts
 *  listening. `options` NULL: the defaults. hetcclInvalidArgument: bad name, no or short secret, bad
 *  address; hetcclSystemError: the address cannot be bound; hetcclUnhandledCudaError / hetcclInvalidUsage:
 *  `device` >= 0 and no GPU runtime serves it. */
HETCCL_API hetcclResult_t hetcclAgentCreate(const char* name, const hetcclAgentOptions_t* options, hetcclAgent_t* agent);
/** Stops the agent: fails transfers still running (hetcclRemoteError, "destroyed"), closes every
 *  connection (peers see them close: their next post to it fails naming it) and joins its threads. Handles of the agent become invalid;
 *  registrations and transfers need not be released first. */
HETCCL_API hetcclResult_t hetcclAgentDestroy(hetcclAgent_t agent);
/** Writes the agent's metadata blob into `blob` (capacity *bytes) and sets *bytes to its size; with
 *  `blob` NULL only sets *bytes. hetcclInvalidArgument when the capacity is too small (*bytes then holds
 *  the size needed). The blob lists the registrations live at this call: export it again after
 *  registering more (a peer's later load of a newer blob replaces the older). */
HETCCL_API hetcclResult_t hetcclAgentGetMetadata(hetcclAgent_t agent, void* blob, size_t* bytes);
/** Loads a peer's blob and writes its name into `name` (capacity HETCCL_AGENT_NAME_MAX + 1). Refused
 *  (hetcclInvalidArgument, saying which check failed): not a blob, another version, failed
 *  authentication (another secret, or altered), this agent's own blob, an older blob of the same
 *  incarnation than the one loaded. A blob of the same name but another incarnation (the peer restarted)
 *  replaces the old one; transfers still running to the old one fail. */
HETCCL_API hetcclResult_t hetcclAgentLoadRemote(hetcclAgent_t agent, const void* blob, size_t bytes, char* name);
/** Forgets peer `name`: closes the connection to it (transfers still running to it fail, "forgotten")
 *  and drops its metadata. hetcclInvalidArgument when no such peer is loaded. */
HETCCL_API hetcclResult_t hetcclAgentForgetRemote(hetcclAgent_t agent, const char* name);

/* ---- registrations ---------------------------------------------------------------------------- */

/** Registers [buf, buf + bytes) (bytes > 0): host memory, or device memory of options.device (detected).
 *  *id (may be NULL) receives the region id peers name it by (the same as hetcclAgentMemQuery's). The
 *  memory must stay allocated until hetcclAgentDeregister. */
HETCCL_API hetcclResult_t hetcclAgentRegister(hetcclAgent_t agent, void* buf, size_t bytes, hetcclAgentMem_t* mem,
                                              uint32_t* id);
/** Ends a registration: peers' later accesses fail as stale; waits (at most the agent's timeout) for
 *  transfers reading or writing it right now -- local ones included -- to finish. The handle is released
 *  either way. On success the memory may be freed. On failure (hetcclRemoteError: a transfer still used it
 *  at the timeout) no new access starts, but the one in progress may still touch the memory until it
 *  ends: free it only after hetcclAgentDestroy. Device memory that peers copied device to device
 *  (HETCCL_AGENT_IPC): each such peer is asked to close its mapping of the allocation, and this waits for
 *  the answers (the last registration in an allocation closes it); a peer that does not confirm makes it
 *  hetcclRemoteError naming the peer -- the registration has ended, but free the memory only after
 *  hetcclAgentDestroy (a peer whose connection closed closes its mappings with it). */
HETCCL_API hetcclResult_t hetcclAgentDeregister(hetcclAgentMem_t mem);
/** *id = region id; *kind (may be NULL) = hetcclMemHost / hetcclMemCuda / hetcclMemHip (hetccl_rma.h
 *  values); *bytes (may be NULL) = size. */
HETCCL_API hetcclResult_t hetcclAgentMemQuery(hetcclAgentMem_t mem, uint32_t* id, int* kind, size_t* bytes);

/* ---- transfers -------------------------------------------------------------------------------- */

typedef enum HETCCL_ENUM_INT { hetcclAgentRead = 0, hetcclAgentWrite = 1 } hetcclAgentOp_t;

/** One range of a transfer: `bytes` bytes between localOffset of local region `localRegion` and
 *  remoteOffset of the peer's region `remoteRegion` (ids of hetcclAgentRegister, as listed in the blob). */
typedef struct {
  uint32_t localRegion;
  uint32_t remoteRegion;
  uint64_t localOffset;
  uint64_t remoteOffset;
  uint64_t bytes;
} hetcclAgentRange_t;

/** Fills ranges[0..count) with a strided run: range i moves `bytes` between localOffset + i*localStride
 *  and remoteOffset + i*remoteStride. */
HETCCL_API hetcclResult_t hetcclAgentStridedRanges(hetcclAgentRange_t* ranges, size_t count, uint32_t localRegion,
                                                   uint64_t localOffset, uint64_t localStride, uint32_t remoteRegion,
                                                   uint64_t remoteOffset, uint64_t remoteStride, uint64_t bytes);

/** Prepares a read (peer -> local) or write (local -> peer) of `ranges` (copied; 1..4M ranges, each
 *  bytes > 0) with peer `peer` (loaded), followed by notification `notif` (0..HETCCL_AGENT_NOTIF_MAX
 *  bytes; notifBytes 0: none). Checks every local range against its registration and every remote range
 *  against the peer's loaded blob (unknown region, out of bounds: hetcclInvalidArgument). Moves nothing. */
HETCCL_API hetcclResult_t hetcclAgentPrepXfer(hetcclAgent_t agent, hetcclAgentOp_t op, const char* peer,
                                              const hetcclAgentRange_t* ranges, size_t nranges, const void* notif,
                                              size_t notifBytes, hetcclAgentXfer_t* xfer);
/** Starts the transfer (connecting to the peer first if needed) and returns at once. hetcclInvalidUsage
 *  while an earlier post of it is still running; hetcclInvalidArgument when a local region was
 *  deregistered since prepare. The local memory must not be changed (write) or read (read) until the
 *  transfer ended. */
HETCCL_API hetcclResult_t hetcclAgentPostXfer(hetcclAgentXfer_t xfer);
/** Never blocks. hetcclSuccess: the last post completed (write: the data is in place at the peer; read:
 *  the data is in the local memory; the notification, if any, was delivered); hetcclInProgress: still
 *  running; hetcclInvalidUsage: never posted, or cancelled; otherwise the error that ended it (message
 *  in hetcclGetLastError, naming the peer). */
HETCCL_API hetcclResult_t hetcclAgentCheckXfer(hetcclAgentXfer_t xfer);
/** Waits until the last post ended and returns what hetcclAgentCheckXfer would then. */
HETCCL_API hetcclResult_t hetcclAgentWaitXfer(hetcclAgentXfer_t xfer);
/** Cancels the last post without blocking: one still queued never starts; one whose request or data is
 *  still being sent is cut off (its connection is closed and opened again by the next post; the peer may
 *  have received part of a write, and no notification of it; writes sent to that peer before it and not
 *  yet answered fail with it, hetcclRemoteError). A write or notification whose bytes are all sent can no
 *  longer be cut off: it ends as it would have. Check reports hetcclInProgress until the transfer no
 *  longer touches the local memory, then hetcclInvalidUsage ("cancelled"). Nothing running: no effect. */
HETCCL_API hetcclResult_t hetcclAgentCancelXfer(hetcclAgentXfer_t xfer);
/** Releases a prepared transfer; hetcclInvalidUsage while a post of it runs (cancel or wait first). */
HETCCL_API hetcclResult_t hetcclAgentReleaseXfer(hetcclAgentXfer_t xfer);

/* ---- notifications ---------------------------------------------------------------------------- */

/** Sends `msg` (0..HETCCL_AGENT_NOTIF_MAX bytes) to `peer` after the transfers posted to it before, and
 *  waits until the peer received it (at most the timeout). */
HETCCL_API hetcclResult_t hetcclAgentGenNotif(hetcclAgent_t agent, const char* peer, const void* msg, size_t bytes);
/** The same without blocking: prepares a notification-only transfer of `msg` (0..HETCCL_AGENT_NOTIF_MAX
 *  bytes, copied) to `peer` (loaded), which hetcclAgentPostXfer sends -- after the transfers posted to that
 *  peer before it -- and hetcclAgentCheckXfer / WaitXfer / CancelXfer / ReleaseXfer handle as any transfer
 *  (hetcclSuccess once the peer received it). Moves no data. */
HETCCL_API hetcclResult_t hetcclAgentPrepNotif(hetcclAgent_t agent, const char* peer, const void* msg, size_t bytes,
                                               hetcclAgentXfer_t* xfer);
/** Takes the oldest notification received, if any: *got = 1, `peer` (capacity HETCCL_AGENT_NAME_MAX + 1)
 *  = its sender's name, msg[0..*bytes) = its message (msg capacity `capacity`; a larger message is
 *  hetcclInvalidArgument and stays queued, *bytes = its size). *got = 0 when none. Never blocks. Up to
 *  HETCCL_RMA_NOTIFY_QUEUE notifications are kept; beyond it senders wait (their transfers' deadlines). */
HETCCL_API hetcclResult_t hetcclAgentGetNotif(hetcclAgent_t agent, char* peer, void* msg, size_t capacity, size_t* bytes,
                                              int* got);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HETCCL_HETCCL_AGENT_H_
