// What every part of one agent shares: its identity and key, its registrations, how it touches memory,
// the notifications it received, its settings, and the one lock + condition that transfers' states use.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/metadata.hpp"
#include "agent/payload.hpp"
#include "agent/peer_copy.hpp"
#include "agent/wire.hpp"
#include "core/deadline.hpp"
#include "core/result.hpp"
#include "rma/memory_access.hpp"
#include "rma/region_table.hpp"

namespace hetccl::agent {

/// One post of a prepared transfer (or a notification) on its way to one peer.
struct Post {
  enum class State { Queued, Running, Done, Failed, Cancelled };
  MsgType type = MsgType::Write;
  std::vector<WireRange> remote;  ///< the target's side of each range
  std::vector<Segment> local;     ///< this side's memory of each range (Notify: none)
  std::vector<rma::RegionRef> held;  ///< local regions this post holds an access to (released when it ends)
  std::vector<unsigned char> notif;
  /// The local allocations and places of every range when the target may copy them itself (empty: it
  /// may not); an Unmap's one allocation.
  PeerSource source;
  Deadline deadline{Clock::now()};
  std::atomic<bool> cancel{false};
  // guarded by AgentCore::mu
  State state = State::Queued;
  Result code = Result::Success;
  std::string message;
};

struct Notification {
  std::string from;
  std::vector<unsigned char> message;
};

struct AgentCore {
  std::string name;
  Incarnation incarnation{};
  bootstrap::Secret key{};
  std::string hostId;
  int64_t timeoutMs = 0;
  bool windows = true;  ///< HETCCL_AGENT_WINDOW allows windows with agents of this host
  /// HETCCL_AGENT_IPC allows device-to-device copies with agents of this host and the GPU runtime can
  /// share memory (peer_copy.hpp)
  bool peerCopy = false;
  /// HETCCL_UCX allows the payload over UCX with agents of other hosts (net_link.hpp); `net` then holds
  /// this agent's UCX transport and listener (created at the first such connection).
  bool ucx = false;
  std::unique_ptr<NetLinks> net;
  uint32_t windowSlots = 4;
  uint64_t windowSlotBytes = 4 << 20;
  size_t notifyQueueMax = 1 << 20;
  std::unique_ptr<rma::MemoryAccess> memory;
  rma::RegionTable regions;
  std::atomic<bool> stopping{false};

  std::mutex mu;
  std::condition_variable cv;  ///< posts ended, notifications arrived or were taken, stopping
  std::deque<Notification> notes;  // guarded by mu

  Deadline deadline() const { return Deadline::afterMs(timeoutMs); }
  /// Ends `post`: releases its local accesses, records the outcome, wakes waiters. No lock held.
  void finish(Post& post, Post::State state, Result code, const std::string& message);
  /// Waits until `post` ended (its channel ends it by its deadline; `post.deadline` + 5 s bounds this
  /// wait too); true when it ended Done.
  bool awaitEnd(const Post& post);
  /// Queues a received notification, waiting (until `deadline`) while the queue is full; false at the
  /// deadline or when stopping.
  bool queueNote(Notification note, Deadline deadline);
};

}  // namespace hetccl::agent
