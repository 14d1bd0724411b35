// The bootstrap network: authenticated rendezvous of all ranks, then a full mesh of authenticated
// sockets used for small out-of-band messages (descriptor exchange, transport handles, barriers) and,
// through a background reader thread, for noticing a dead peer (its socket closes) on every rank.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "bootstrap/unique_id.hpp"
#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/peer_info.hpp"

namespace hetccl::bootstrap {

/// Wire protocol version of the bootstrap and of rank descriptors. Ranks with different versions fail
/// init with a clear error on every rank. Version 2 added the Goodbye frame (Bootstrap::leave), version 3
/// the Heartbeat and Notice frames (silent peers, failure notices).
inline constexpr uint32_t kProtocolVersion = 3;

/// This process's descriptor: host id (HETCCL_HOST_ID or detected: hostname + boot id), domain
/// (HETCCL_DOMAIN or the device kind's name), pid, protocol version.
PeerInfo detectSelf(int rank, DeviceKind kind, int deviceIndex);

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Every rank's descriptor, indexed by rank.
  virtual const std::vector<PeerInfo>& peers() const = 0;

  /// `data` holds size() * bytesPerRank bytes with this rank's slot filled; fills the others.
  virtual void allGather(void* data, size_t bytesPerRank) = 0;
  /// Point-to-point message with a tag; recv() waits for exactly `bytes` bytes with that tag from that
  /// peer (a different size is a PeerError). Messages with other tags are kept for their own recv().
  virtual void send(int peer, uint32_t tag, const void* data, size_t bytes) = 0;
  virtual void recv(int peer, uint32_t tag, void* data, size_t bytes) = 0;
  virtual void barrier() = 0;

  /// The first peer failure noticed (a closed or broken mesh socket), if any. Cheap; safe from any thread.
  virtual std::optional<PeerError> failure() const = 0;
  /// The first peer failure noticed among every rank of the job, members of this view or not (a rank of
  /// a split's other group dies, and members fail because of it): peer() is a rank of this view, or -1
  /// for a non-member (the message names its job rank and host). For attributing a failure to its cause;
  /// failure() decides whether this view is broken. Default: failure().
  virtual std::optional<PeerError> firstFailureInJob() const { return failure(); }
  /// Makes every current and future wait throw AbortedError. Safe from any thread.
  virtual void abort() = 0;
  /// Tells the other ranks that this rank is failing because of `cause` (which names a peer), so that a
  /// rank that next sees this one go away reports cause.peer() instead. Call it before tearing down
  /// after a failure; best effort, bounded (~200 ms in all), never throws. Default: nothing.
  virtual void reportFailure(const PeerError& cause) { (void)cause; }

  /// Says goodbye: tells every other rank of this bootstrap that this rank is done with it, so that its
  /// closing its connections afterwards is a normal leave, not a failure of this bootstrap (no failure()
  /// and no error in their waits on it). Call only after a completed final barrier, once no message of
  /// this bootstrap is outstanding; nothing may be sent through it afterwards. Best effort: a peer that
  /// already left is skipped; never throws for a peer. Views sharing the sockets (split parents and
  /// children) still report this rank's close as a failure until they say goodbye too; a rank that
  /// dies or aborts without saying goodbye is reported as before.
  virtual void leave() = 0;

  /// A bootstrap over a subset of ranks (`ranks[i]` is the parent rank of new rank i), sharing this
  /// one's sockets under its own tag space `commTag`. The child must not outlive the parent.
  virtual std::unique_ptr<Bootstrap> split(const std::vector<int>& ranks, uint32_t commTag) = 0;
};

/// Joins the job: authenticates to the root, sends `self`, receives every descriptor, builds the mesh.
/// Rank 0 starts the root first when id.rank0StartsRoot. Throws InvalidArgument / InvalidUsage for a
/// bad id or mismatched layout (same message on every rank), TimeoutError at the deadline,
/// AbortedError when `abortFlag` becomes true.
std::unique_ptr<Bootstrap> connect(const UniqueId& id, int rank, int nranks, const PeerInfo& self,
                                   Deadline deadline, const std::atomic<bool>* abortFlag = nullptr);

}  // namespace hetccl::bootstrap
