// Is a peer process on this host still alive? Used by shm, where a dead peer never closes anything.
#pragma once

#include <cstdint>

#include "core/deadline.hpp"
#include "core/peer_info.hpp"

namespace hetccl::transport::shm {

/// Watches one process. Uses a pidfd (pidfd_open + poll, Linux 5.3+) opened at construction, so a
/// recycled pid cannot be mistaken for the peer; falls back to kill(pid, 0) plus /proc/<pid>/stat
/// state 'Z' (zombie) where pidfds are unavailable. pid 0 (unknown) and our own pid count as alive.
class ProcessLiveness {
 public:
  explicit ProcessLiveness(int32_t pid);
  ~ProcessLiveness();
  ProcessLiveness(const ProcessLiveness&) = delete;
  ProcessLiveness& operator=(const ProcessLiveness&) = delete;

  /// Non-blocking: false once the process has exited (zombie included).
  bool alive() const;

 private:
  int32_t pid_;
  int pidfd_ = -1;
};

/// ProcessLiveness rate-limited for progress loops: checks at most every `periodMs`.
class PeerWatch {
 public:
  explicit PeerWatch(const PeerInfo& peer, int periodMs = 50) : peer_(peer), liveness_(peer.pid), periodMs_(periodMs) {}
  /// Throws PeerError naming the peer (rank, host, pid) if a due check finds it dead; `what` says which
  /// connection noticed ("shm send").
  void throwIfDead(const char* what);

 private:
  PeerInfo peer_;
  ProcessLiveness liveness_;
  int periodMs_;
  Clock::time_point nextCheck_ = Clock::now();
};

}  // namespace hetccl::transport::shm
