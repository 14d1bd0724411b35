#include "support/mem_transport.hpp"

#include <algorithm>
#include <cstring>
#include <deque>

#include "core/error.hpp"

namespace hetccl::transport::mem {
namespace {

void throwIfAborted(const std::atomic<bool>* abortFlag, int self, int peer) {
  if (abortFlag && abortFlag->load(std::memory_order_relaxed))
    throw AbortedError(concat("mem transport: rank ", self, " aborted while talking to rank ", peer));
}

void throwIfDead(const Fabric& f, int self, int peer, const char* what) {
  if (f.isDead(peer))
    throw PeerError(peer, "", concat("mem transport: rank ", peer, " died while rank ", self, " waited to ", what));
}

void throwIfAbandoned(bool abandoned, int self, int peer, const char* what) {
  if (abandoned)
    throw InternalError(concat("mem transport: rank ", self, " used its ", what, " connection with rank ", peer,
                               " after abandon()"));
}

class MemSendConn final : public SendConn {
 public:
  MemSendConn(std::shared_ptr<Fabric> f, int self, int peer, const std::atomic<bool>* abortFlag)
      : fabric_(std::move(f)), channel_(fabric_->channel(self, peer)), self_(self), peer_(peer), abort_(abortFlag) {}

  Request isend(const void* data, size_t bytes, const CallStamp& stamp) override {
    throwIfAbandoned(abandoned_, self_, peer_, "send");
    Fabric::Message m;
    m.bytes = bytes;
    m.stamp = stamp;
    const bool eager = bytes <= fabric_->eagerBytes();
    if (eager) {
      const auto* p = static_cast<const unsigned char*>(data);
      m.copy.assign(p, p + bytes);
    } else {
      m.data = data;
    }
    {
      std::lock_guard<std::mutex> lock(channel_.mutex);
      channel_.queue.push_back(std::move(m));
    }
    eager_.push_back(eager);
    return eager_.size();
  }

  bool test(Request r) override {
    throwIfAbandoned(abandoned_, self_, peer_, "send");
    if (r == 0 || r > eager_.size()) throw InternalError(concat("mem transport: unknown send request ", r));
    if (eager_[r - 1] || channel_.consumed.load(std::memory_order_acquire) >= r) return true;
    throwIfAborted(abort_, self_, peer_);
    throwIfDead(*fabric_, self_, peer_, "take a send");
    return false;
  }

  /// Withdraws every rendezvous message the receiver has not copied yet (and, to keep FIFO order, every
  /// message queued after the first of them). The receiver copies under the channel lock, so once this
  /// holds the lock each message is either fully copied or never read: the sender's buffers are free.
  void abandon() noexcept override {
    abandoned_ = true;
    std::lock_guard<std::mutex> lock(channel_.mutex);
    auto& q = channel_.queue;
    auto firstBorrowed = std::find_if(q.begin(), q.end(), [](const Fabric::Message& m) { return m.data != nullptr; });
    q.erase(firstBorrowed, q.end());
  }

 private:
  std::shared_ptr<Fabric> fabric_;
  Fabric::Channel& channel_;
  int self_, peer_;
  const std::atomic<bool>* abort_;
  std::vector<bool> eager_;  // per request
  bool abandoned_ = false;
};

class MemRecvConn final : public RecvConn {
 public:
  MemRecvConn(std::shared_ptr<Fabric> f, int self, int peer, const std::atomic<bool>* abortFlag)
      : fabric_(std::move(f)), channel_(fabric_->channel(peer, self)), self_(self), peer_(peer), abort_(abortFlag) {}

  Request irecv(void* data, size_t bytes, const Reducer* reducer, const CallStamp& expected) override {
    throwIfAbandoned(abandoned_, self_, peer_, "receive");
    posted_.push_back(Posted{static_cast<unsigned char*>(data), bytes, reducer, expected});
    return ++postedCount_;
  }

  bool test(Request r) override {
    throwIfAbandoned(abandoned_, self_, peer_, "receive");
    if (r == 0 || r > postedCount_) throw InternalError(concat("mem transport: unknown receive request ", r));
    progress();
    if (doneCount_ >= r) return true;
    throwIfAborted(abort_, self_, peer_);
    throwIfDead(*fabric_, self_, peer_, "deliver a receive");
    return false;
  }

  /// Forgets every posted receive. Only progress() (under the channel lock) writes into them, so after
  /// this no buffer or Reducer of theirs is touched; the sender's matching sends never complete.
  void abandon() noexcept override {
    abandoned_ = true;
    std::lock_guard<std::mutex> lock(channel_.mutex);
    posted_.clear();
  }

 private:
  struct Posted {
    unsigned char* data;
    size_t bytes;
    const Reducer* reducer;
    CallStamp expected;
  };

  /// Matches posted receives with queued messages. Copies while holding the channel lock: the sender's
  /// abandon() takes that lock to withdraw its messages, so it never frees a buffer mid-copy.
  void progress() {
    std::lock_guard<std::mutex> lock(channel_.mutex);
    while (!posted_.empty() && !channel_.queue.empty()) {
      const Fabric::Message& m = channel_.queue.front();
      const Posted& p = posted_.front();
      if (!matches(m.stamp, p.expected))
        throw PeerError(peer_, "", concat("mem transport at rank ", self_, ": ", callMismatchMessage(peer_, m.stamp, p.expected),
                                          ": the ranks' calls disagree"));
      if (m.bytes != p.bytes)
        throw PeerError(peer_, "", concat("mem transport: rank ", peer_, " sent ", m.bytes, " bytes where rank ", self_,
                                          " expected ", p.bytes, " (schedules disagree)"));
      deliver(p, m.data ? static_cast<const unsigned char*>(m.data) : m.copy.data());
      channel_.queue.pop_front();
      channel_.consumed.fetch_add(1, std::memory_order_release);
      posted_.pop_front();
      ++doneCount_;
    }
  }

  /// Copies, or reduces in pieces of whole elements (as a ring-buffered transport would).
  static void deliver(const Posted& p, const unsigned char* src) {
    if (!p.reducer) {
      std::memcpy(p.data, src, p.bytes);
      return;
    }
    const size_t elem = p.reducer->elemSize, count = p.bytes / elem, piece = 4096;
    for (size_t off = 0; off < count; off += piece)
      p.reducer->fn(p.data + off * elem, src + off * elem, std::min(piece, count - off), p.reducer->ctx);
  }

  std::shared_ptr<Fabric> fabric_;
  Fabric::Channel& channel_;
  int self_, peer_;
  const std::atomic<bool>* abort_;
  std::deque<Posted> posted_;
  uint64_t postedCount_ = 0, doneCount_ = 0;
  bool abandoned_ = false;
};

class MemListener final : public Listener {
 public:
  explicit MemListener(int rank) { std::memcpy(handle_.bytes.data(), &rank, sizeof rank); }
  const Handle& handle() const override { return handle_; }

 private:
  Handle handle_;
};

void checkRank(const Fabric& f, int rank, const char* role) {
  if (rank < 0 || rank >= f.nranks())
    throw InvalidArgument(concat("mem transport: ", role, " rank ", rank, " is not in a fabric of ", f.nranks()));
}

}  // namespace

bool MemTransport::canConnect(const PeerInfo& self, const PeerInfo& peer) const {
  return self.rank >= 0 && self.rank < fabric_->nranks() && peer.rank >= 0 && peer.rank < fabric_->nranks();
}

std::unique_ptr<Listener> MemTransport::listen(const PeerInfo& self) {
  checkRank(*fabric_, self.rank, "listening");
  return std::make_unique<MemListener>(self.rank);
}

std::unique_ptr<SendConn> MemTransport::connect(const Handle& peerHandle, const ConnectInfo& info, Deadline) {
  int listener = -1;
  std::memcpy(&listener, peerHandle.bytes.data(), sizeof listener);
  checkRank(*fabric_, info.self.rank, "connecting");
  checkRank(*fabric_, info.peer.rank, "peer");
  if (listener != info.peer.rank)
    throw InvalidArgument(concat("mem transport: handle of rank ", listener, " used to connect to rank ", info.peer.rank));
  return std::make_unique<MemSendConn>(fabric_, info.self.rank, info.peer.rank, info.abortFlag);
}

std::unique_ptr<RecvConn> MemTransport::accept(Listener&, const ConnectInfo& info, Deadline) {
  checkRank(*fabric_, info.self.rank, "accepting");
  checkRank(*fabric_, info.peer.rank, "peer");
  return std::make_unique<MemRecvConn>(fabric_, info.self.rank, info.peer.rank, info.abortFlag);
}

}  // namespace hetccl::transport::mem
