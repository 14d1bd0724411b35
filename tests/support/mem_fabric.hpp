// The in-memory fabric: ranks are threads of one process; every (sender, receiver) pair has one FIFO
// channel of messages. Used by tests to run the real engine without sockets.
//
// Messages up to `eagerBytes` are copied at isend() and the send completes at once; larger ones are
// rendezvous: the receiver copies straight from the sender's buffer and only then does the send
// complete (the strictest buffering a real transport may have, so schedule bugs that rely on buffering
// show up as timeouts in tests).
//
// abandon() on either side (transport contract) stops the transport touching that side's buffers; the
// other side's matching requests then never complete, as with a real transport whose peer went quiet:
// the peer learns the cause from the kill flag, its failure detector, or its deadline.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/base/call_stamp.hpp"

namespace hetccl::transport::mem {

class Fabric {
 public:
  /// A fabric for `nranks` ranks. eagerBytes = 0 makes every message rendezvous.
  explicit Fabric(int nranks, size_t eagerBytes = 0);

  int nranks() const { return nranks_; }
  size_t eagerBytes() const { return eagerBytes_; }

  /// Marks `rank` dead: every unfinished request on a connection to or from it throws PeerError on the
  /// other side. Safe from any thread.
  void kill(int rank);
  bool isDead(int rank) const { return dead_[rank].load(std::memory_order_acquire); }

  struct Message {
    const void* data = nullptr;           ///< rendezvous: the sender's buffer
    std::vector<unsigned char> copy;      ///< eager: the bytes
    size_t bytes = 0;
    CallStamp stamp;                      ///< the sender's call stamp
  };
  /// One direction between two ranks. `mutex` guards `queue` and is held by the receiver for the whole
  /// copy out of a message, so a sender that withdraws its messages under it (abandon()) knows each one
  /// was either fully copied before or will never be read.
  struct Channel {
    std::mutex mutex;
    std::deque<Message> queue;               ///< sent, not yet consumed (nor withdrawn)
    std::atomic<uint64_t> consumed{0};       ///< messages the receiver has finished copying
  };
  /// The channel carrying `from`'s messages to `to`.
  Channel& channel(int from, int to) { return *channels_[static_cast<size_t>(from) * nranks_ + to]; }

 private:
  int nranks_;
  size_t eagerBytes_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::unique_ptr<std::atomic<bool>[]> dead_;
};

}  // namespace hetccl::transport::mem
