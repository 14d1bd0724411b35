#include "transport/shm/shm_conn.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "transport/base/crc32c.hpp"
#include "transport/base/integrity.hpp"

namespace hetccl::transport::shm {
namespace {

void checkRequest(Request r, Request lastIssued, const char* side, const PeerInfo& peer) {
  if (r == 0 || r > lastIssued)
    throw InvalidArgument(concat(side, " to rank ", peer.rank, ": test() of request ", r,
                                 " which was never issued (last issued: ", lastIssued, ")"));
}

}  // namespace

ShmConnBase::ShmConnBase(ShmSegment segment, const ConnectInfo& info)
    : segment_(std::move(segment)), ring_(segment_.ring()), published_(segment_.name()), info_(info), watch_(info.peer),
      checksum_(checksumsEnabled()) {}

void ShmConnBase::onNoProgress(const char* what, bool peerClosed) {
  if (info_.abortFlag && info_.abortFlag->load(std::memory_order_acquire))
    throw AbortedError(concat(what, " with rank ", info_.peer.rank, ": communicator aborted"));
  if (peerClosed)
    throw PeerError(info_.peer.rank, info_.peer.hostId,
                    concat(what, ": peer rank ", info_.peer.rank, " on host '", info_.peer.hostId,
                           "' closed its end of the connection with requests outstanding"));
  watch_.throwIfDead(what);
}

void ShmConnBase::rethrowIfFailed() const {
  if (failure_) std::rethrow_exception(failure_);
}

// ---- sender ----

ShmSendConn::~ShmSendConn() {
  ring_.header->senderClosed.store(1, std::memory_order_release);
  ShmSegment::unlink(segment_.name());  // normally accept() already did; a crash before accept leaks nothing
}

Request ShmSendConn::isend(const void* data, size_t bytes, const CallStamp& stamp) {
  rethrowIfFailed();
  if (!data && bytes > 0) throw InvalidArgument(concat("shm isend to rank ", info_.peer.rank, ": null buffer"));
  queue_.push_back(Pending{static_cast<const unsigned char*>(data), bytes, 0, ++lastIssued_, callStampWords(stamp)});
  return lastIssued_;
}

bool ShmSendConn::progress() {
  RingHeader& h = *ring_.header;
  uint64_t tail = h.tail.load(std::memory_order_acquire);
  bool progressed = false;
  while (!queue_.empty()) {
    if (head_ - tail >= ring_.slots) {
      tail = h.tail.load(std::memory_order_acquire);
      if (head_ - tail >= ring_.slots) break;  // ring full
    }
    Pending& m = queue_.front();
    size_t piece = std::min<size_t>(ring_.slotBytes, m.bytes - m.offset);
    unsigned char* slot = ring_.slot(head_);
    if (piece > 0) std::memcpy(slot, m.data + m.offset, piece);
    const uint32_t crc = checksum_ ? crc32c(0, m.data + m.offset, piece) : 0;
    if (piece > 0 && testing::takeCorruption()) slot[piece / 2] ^= 0x10;  // test hook: a faulty copy
    SlotInfo& info = ring_.slotInfo(head_);
    info = SlotInfo{m.id, piece, crc, checksum_ ? kSlotHasCrc : 0, {}};
    std::memcpy(info.stamp, m.stamp.data(), sizeof info.stamp);
    published_.release();
    h.head.store(++head_, std::memory_order_release);
    m.offset += piece;
    progressed = true;
    if (m.offset == m.bytes) {
      lastDone_ = m.id;
      queue_.pop_front();
    }
  }
  return progressed;
}

bool ShmSendConn::test(Request r) {
  return guarded([&] {
    checkRequest(r, lastIssued_, "shm send", info_.peer);
    if (r <= lastDone_) return true;
    bool progressed = progress();
    if (r <= lastDone_) return true;
    if (progressed) return false;
    onNoProgress("shm send", ring_.header->receiverClosed.load(std::memory_order_acquire) != 0);
    return false;
  });
}

// ---- receiver ----

void ShmRecvConn::verify(const SlotInfo& slot, const unsigned char* data, uint64_t message) const {
  const PeerInfo& peer = info_.peer;
  if (slot.flags & ~kSlotHasCrc)
    throw PeerError(peer.rank, peer.hostId, concat("shm recv at rank ", info_.self.rank, " from rank ", peer.rank,
                                                   ": ring slot has unknown flags 0x", std::hex, slot.flags));
  if (!(slot.flags & kSlotHasCrc)) {
    if (checksum_)
      throw PeerError(peer.rank, peer.hostId,
                      concat("shm recv at rank ", info_.self.rank, " from rank ", peer.rank, " (host '", peer.hostId,
                             "'): the sender sends no checksums but HETCCL_CHECKSUM=1 here: set it alike on every rank"));
    return;
  }
  const uint32_t actual = crc32c(0, data, slot.bytes);
  if (actual != slot.crc)
    throw PeerError(peer.rank, peer.hostId,
                    concat("shm recv at rank ", info_.self.rank, " from rank ", peer.rank, " (host '", peer.hostId,
                           "'): checksum mismatch in a ", slot.bytes, "-byte piece of message ", message,
                           ": the sender's crc32c is 0x", std::hex, slot.crc, ", the slot holds 0x", actual, std::dec,
                           ": data was corrupted between rank ", peer.rank, " and this rank (HETCCL_CHECKSUM)"));
}

void ShmRecvConn::checkStamp(const SlotInfo& slot, const Pending& m) const {
  if (std::memcmp(slot.stamp, m.expected.data(), sizeof slot.stamp) == 0) return;  // the common case
  const PeerInfo& peer = info_.peer;
  const std::string where = concat("shm recv at rank ", info_.self.rank, " from rank ", peer.rank, " (host '",
                                   peer.hostId, "'): ");
  CallStampWords got;
  std::memcpy(got.data(), slot.stamp, sizeof slot.stamp);
  std::string why;
  std::optional<CallStamp> sent = decodeCallStampWords(got, &why);
  std::optional<CallStamp> expected = decodeCallStampWords(m.expected);
  if (!sent) throw PeerError(peer.rank, peer.hostId, concat(where, why));
  throw PeerError(peer.rank, peer.hostId,
                  concat(where, callMismatchMessage(peer.rank, *sent, expected.value_or(CallStamp{})),
                         ": the ranks' calls disagree"));
}

ShmRecvConn::ShmRecvConn(ShmSegment segment, const ConnectInfo& info) : ShmConnBase(std::move(segment), info) {
  tail_ = ring_.header->tail.load(std::memory_order_relaxed);
}

ShmRecvConn::~ShmRecvConn() { ring_.header->receiverClosed.store(1, std::memory_order_release); }

Request ShmRecvConn::irecv(void* data, size_t bytes, const Reducer* reducer, const CallStamp& expected) {
  rethrowIfFailed();
  const int peer = info_.peer.rank;
  if (!data && bytes > 0) throw InvalidArgument(concat("shm irecv from rank ", peer, ": null buffer"));
  if (reducer) {
    if (!reducer->fn || reducer->elemSize == 0)
      throw InvalidArgument(concat("shm irecv from rank ", peer, ": reducer without function or element size"));
    if (bytes % reducer->elemSize != 0 || ring_.slotBytes % reducer->elemSize != 0)
      throw InvalidArgument(concat("shm irecv from rank ", peer, ": ", bytes, " bytes / slot of ", ring_.slotBytes,
                                   " bytes is not a whole number of ", reducer->elemSize, "-byte elements"));
  }
  queue_.push_back(Pending{static_cast<unsigned char*>(data), bytes, 0, ++lastIssued_, reducer, callStampWords(expected)});
  return lastIssued_;
}

bool ShmRecvConn::progress() {
  RingHeader& h = *ring_.header;
  uint64_t head = h.head.load(std::memory_order_acquire);
  published_.acquire();
  bool progressed = false;
  while (!queue_.empty() && tail_ != head) {
    if (head - tail_ > ring_.slots)
      throw PeerError(info_.peer.rank, info_.peer.hostId,
                      concat("shm recv: ring from rank ", info_.peer.rank, " is corrupt (head ", head, ", tail ",
                             tail_, ", ", ring_.slots, " slots)"));
    Pending& m = queue_.front();
    const SlotInfo slot = ring_.slotInfo(tail_);
    checkStamp(slot, m);
    size_t expected = std::min<size_t>(ring_.slotBytes, m.bytes - m.offset);
    if (slot.message != m.id || slot.bytes != expected)
      throw PeerError(info_.peer.rank, info_.peer.hostId,
                      concat("shm recv: rank ", info_.peer.rank, " sent a piece of message ", slot.message, " (",
                             slot.bytes, " bytes) where message ", m.id, " expected ", expected,
                             " bytes: isend/irecv sizes differ"));
    const unsigned char* src = ring_.slot(tail_);
    verify(slot, src, m.id);
    if (expected > 0) {
      if (m.reducer)
        m.reducer->fn(m.data + m.offset, src, expected / m.reducer->elemSize, m.reducer->ctx);
      else
        std::memcpy(m.data + m.offset, src, expected);
    }
    h.tail.store(++tail_, std::memory_order_release);
    m.offset += expected;
    progressed = true;
    if (m.offset == m.bytes) {
      lastDone_ = m.id;
      queue_.pop_front();
    }
    if (tail_ == head) {
      head = h.head.load(std::memory_order_acquire);
      published_.acquire();
    }
  }
  return progressed;
}

bool ShmRecvConn::test(Request r) {
  return guarded([&] {
    checkRequest(r, lastIssued_, "shm recv", info_.peer);
    if (r <= lastDone_) return true;
    bool progressed = progress();
    if (r <= lastDone_) return true;
    if (progressed) return false;
    // The sender sets senderClosed after its last publish: closed and nothing left means it is gone.
    bool closed = ring_.header->senderClosed.load(std::memory_order_acquire) != 0 &&
                  ring_.header->head.load(std::memory_order_acquire) == tail_;
    onNoProgress("shm recv", closed);
    return false;
  });
}

}  // namespace hetccl::transport::shm
