// The bootstrap mesh once built: one authenticated socket per other rank, a reader thread that drains
// every socket into per-(peer, type, comm, tag) queues, and the first failure of each peer (EOF, socket
// error, malformed frame) as a PeerError naming its rank and host. Shared by a Bootstrap and its splits.
// A peer that said goodbye on a comm id (it finalized that communicator) has left it normally: its
// failure no longer counts for that comm id, only for the comm ids it has not left.
//
// Liveness (mesh_liveness.cc): the reader thread sends a Heartbeat frame to every peer each heartbeat
// period (HETCCL_TIMEOUT / 20, within [20 ms, 500 ms]) without ever blocking on one, and a peer from which
// nothing at all arrived for HETCCL_TIMEOUT is a failure ("sent nothing ... stopped, hung or
// unreachable"): a SIGSTOPped process, a dead link or dropped packets are named on every rank, whichever
// rank each one was waiting for. A rank that goes away after a failure without saying goodbye first sends
// every peer a Notice naming the failure it saw (or the peer a recv() of it timed out on), so that ranks
// which see it leave report the real cause.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "bootstrap/frame.hpp"
#include "core/error.hpp"
#include "core/peer_info.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

/// A recv() that times out names the member silent longest instead of the awaited rank when that member
/// has been quiet for at least three heartbeat periods and longer than the awaited rank
/// (deadline_blame.hpp): the awaited rank is itself waiting, most likely for that one (a rank stopped
/// inside a split while others already wait in the parent, or cut off in the middle of init).
///
/// A Notice frame (see frame.hpp) saying that the sender fails because of rank `blamed` (a mesh rank);
/// `reason` is cut to Mesh::kMaxNoticeReason bytes.
std::vector<unsigned char> encodeNotice(int blamed, const std::string& reason, uint32_t comm = 0);

class Mesh {
 public:
  /// Longest reason a failure Notice carries (bytes).
  static constexpr size_t kMaxNoticeReason = 1024;

  /// `sockets[r]` is the connection to rank r (invalid at `rank`); `peers[r]` its descriptor.
  /// Starts the reader thread.
  Mesh(int rank, std::vector<PeerInfo> peers, std::vector<net::Socket> sockets);
  /// Stops the reader thread and closes every socket (the peers see this rank leave).
  ~Mesh();
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  int rank() const { return rank_; }
  const std::vector<PeerInfo>& peers() const { return peers_; }

  /// Sends one Data/Collective frame (payload: comm | 0 | bytes). Throws the peer's failure if it has
  /// failed, AbortedError after abort(), PeerError/TimeoutError naming the peer when the send fails.
  void send(int peer, FrameType type, uint32_t comm, uint32_t tag, const void* data, size_t bytes);
  /// Waits for the frame with that key and copies exactly `bytes` (another size is a PeerError).
  /// Throws AbortedError after abort(), the earliest failure among the `members` that have not left
  /// `comm` once any has failed (queued messages are still delivered first), PeerError when `peer` left
  /// `comm` without sending it, TimeoutError at `deadline`.
  void recv(int peer, FrameType type, uint32_t comm, uint32_t tag, void* data, size_t bytes, Deadline deadline,
            const std::vector<int>& members);
  /// Sends a Goodbye frame for `comm` to every other rank of `members` (global ranks) that has not
  /// failed. Best effort: a peer whose connection is already gone is skipped; never throws for a peer.
  void goodbye(uint32_t comm, const std::vector<int>& members);

  /// Tells every peer that has not failed that this rank failed because of `cause` (a Notice frame naming
  /// cause.peer()), so that they report that rank rather than this one when this rank goes away. Best
  /// effort: waits at most ~200 ms in all, never throws. Ignored when cause.peer() is not a peer.
  void notifyFailure(const PeerError& cause);

  /// The earliest failure among the `members` (global ranks) that have not left `comm`, if any.
  std::optional<PeerError> failure(const std::vector<int>& members, uint32_t comm) const;
  /// Wakes every wait with AbortedError, now and later.
  void abort();

  /// "rank 2 (host nodeB)".
  std::string name(int peer) const;

 private:
  using Key = std::tuple<int, FrameType, uint32_t, uint32_t>;
  struct Failure {
    uint64_t order;
    PeerError error;
  };

  void readLoop() noexcept;
  void readFrom(int peer);
  void recordFailure(int peer, const std::string& what);
  void recordGoodbye(int peer, uint32_t comm);
  void recordNotice(int from, const std::vector<unsigned char>& payload);
  std::optional<PeerError> failureLocked(const std::vector<int>& members, uint32_t comm) const;
  /// Milliseconds since anything arrived from `peer`. Caller holds mutex_.
  int64_t silenceMsLocked(int peer) const;
  /// At a recv() deadline: the member of `comm` to name instead of `awaited`, with its silence in ms (the
  /// rule: deadline_blame.hpp, with three heartbeat periods). None: name `awaited`. Caller holds mutex_.
  std::optional<std::pair<int, int64_t>> silentMemberLocked(const std::vector<int>& members, uint32_t comm,
                                                            int awaited) const;

  // mesh_liveness.cc
  /// Reader thread, once per wake-up: heartbeats that are due, peers silent for too long. Returns the
  /// milliseconds until the next due heartbeat (the longest the reader may sleep).
  int livenessTick();
  /// Non-blocking: queues one heartbeat for `peer` unless a send is under way or bytes are still pending.
  void sendHeartbeat(int peer);
  /// Sends `frame` to `peer` after any bytes a heartbeat left pending; caller holds sendLocks_[peer].
  void sendLocked(int peer, const std::vector<unsigned char>& frame, Deadline deadline);
  /// Sends a Notice blaming `blamed` to every other live peer, all within `budgetMs` together.
  void broadcastNotice(int blamed, const std::string& reason, uint32_t comm, int budgetMs) noexcept;
  /// At teardown without goodbye: notices of the earliest failure of a peer that never said goodbye.
  void noticeOnAbnormalExit() noexcept;

  int rank_;
  std::vector<PeerInfo> peers_;
  std::vector<net::Socket> sockets_;
  std::vector<FrameReader> readers_;
  std::vector<std::unique_ptr<std::mutex>> sendLocks_;
  std::vector<std::vector<unsigned char>> pendingOut_;  // per peer, under sendLocks_[peer]: a heartbeat's tail
  std::vector<Clock::time_point> lastHeard_;            // written by the reader under mutex_: when bytes last arrived
  Clock::time_point nextHeartbeat_;                     // reader thread only
  int64_t silenceMs_ = 0;                               // HETCCL_TIMEOUT
  int heartbeatMs_ = 0;
  int wakeFd_ = -1;  // eventfd: tells the reader thread to stop

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, std::deque<std::vector<unsigned char>>> queues_;
  std::vector<std::optional<Failure>> failures_;
  std::vector<std::set<uint32_t>> departures_;  // per peer: the comm ids it said goodbye on
  uint64_t failureCount_ = 0;
  bool aborted_ = false;
  bool stopping_ = false;
  bool leftWorld_ = false;  // goodbye() was called for comm 0: a normal teardown follows
  std::optional<PeerError> timedOut_;  // the first recv() that timed out: the cause if this rank leaves
  std::thread reader_;
};

}  // namespace hetccl::bootstrap
