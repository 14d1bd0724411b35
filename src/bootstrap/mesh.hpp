// The bootstrap mesh once built: one authenticated socket per other rank, a reader thread that drains
// every socket into per-(peer, type, comm, tag) queues, and the first failure of each peer (EOF, socket
// error, malformed frame) as a PeerError naming its rank and host. Shared by a Bootstrap and its splits.
// A peer that said goodbye on a comm id (it finalized that communicator) has left it normally: its
// failure no longer counts for that comm id, only for the comm ids it has not left.
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
#include <vector>

#include "bootstrap/frame.hpp"
#include "core/error.hpp"
#include "core/peer_info.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

class Mesh {
 public:
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
  std::optional<PeerError> failureLocked(const std::vector<int>& members, uint32_t comm) const;

  int rank_;
  std::vector<PeerInfo> peers_;
  std::vector<net::Socket> sockets_;
  std::vector<FrameReader> readers_;
  std::vector<std::unique_ptr<std::mutex>> sendLocks_;
  int wakeFd_ = -1;  // eventfd: tells the reader thread to stop

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, std::deque<std::vector<unsigned char>>> queues_;
  std::vector<std::optional<Failure>> failures_;
  std::vector<std::set<uint32_t>> departures_;  // per peer: the comm ids it said goodbye on
  uint64_t failureCount_ = 0;
  bool aborted_ = false;
  bool stopping_ = false;
  std::thread reader_;
};

}  // namespace hetccl::bootstrap
