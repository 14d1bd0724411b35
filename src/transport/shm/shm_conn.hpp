// The two ends of one shm connection: a sender that copies messages into the ring slot by slot, and a
// receiver that copies (or reduces) them out. Messages of any size stream through the ring in pieces of
// at most slotBytes; a message of 0 bytes still uses one (empty) slot, so every message is checked
// against the receiver's posted request (call stamp, message number and piece length must match). With
// HETCCL_CHECKSUM=1 every slot also carries the CRC32C of its piece, checked before the piece is used.
#pragma once

#include <deque>
#include <exception>

#include "transport/base/transport.hpp"
#include "transport/shm/cross_mapping_sync.hpp"
#include "transport/shm/process_liveness.hpp"
#include "transport/shm/shm_segment.hpp"

namespace hetccl::transport::shm {

/// State shared by both ends: the mapped ring, who the peer is, abort and liveness checks.
class ShmConnBase {
 protected:
  ShmConnBase(ShmSegment segment, const ConnectInfo& info);
  /// Called when a test() found nothing to do: throws AbortedError if aborted, PeerError if the peer
  /// closed its end (`peerClosed` and no data is left) or its process died (checked every ~50 ms).
  void onNoProgress(const char* what, bool peerClosed);
  /// Rethrows the failure that made this connection unusable, if any.
  void rethrowIfFailed() const;
  /// Runs `step`, remembering any exception so later calls rethrow it.
  template <typename F>
  bool guarded(F&& step) {
    rethrowIfFailed();
    try {
      return step();
    } catch (...) {
      failure_ = std::current_exception();
      throw;
    }
  }

  ShmSegment segment_;
  RingView ring_;
  CrossMappingSync published_;  ///< the edge from the sender's `head` store to the receiver's load (for TSan)
  ConnectInfo info_;
  PeerWatch watch_;
  bool checksum_;  ///< HETCCL_CHECKSUM: send a crc with every slot / insist on receiving one
  std::exception_ptr failure_;
};

class ShmSendConn final : public SendConn, private ShmConnBase {
 public:
  /// Takes over a freshly created and initialised ring segment (this side unlinks it when destroyed).
  ShmSendConn(ShmSegment segment, const ConnectInfo& info) : ShmConnBase(std::move(segment), info) {}
  ~ShmSendConn() override;
  Request isend(const void* data, size_t bytes, const CallStamp& stamp = {}) override;
  bool test(Request r) override;

 private:
  struct Pending {
    const unsigned char* data;
    size_t bytes;
    size_t offset;
    Request id;
    CallStampWords stamp;
  };
  bool progress();  ///< copies into free slots; true if any slot was published

  std::deque<Pending> queue_;
  Request lastIssued_ = 0;
  Request lastDone_ = 0;
  uint64_t head_ = 0;
};

class ShmRecvConn final : public RecvConn, private ShmConnBase {
 public:
  /// Takes over a validated, mapped (and already unlinked) ring segment.
  ShmRecvConn(ShmSegment segment, const ConnectInfo& info);
  ~ShmRecvConn() override;
  Request irecv(void* data, size_t bytes, const Reducer* reducer = nullptr, const CallStamp& expected = {}) override;
  bool test(Request r) override;

 private:
  struct Pending {
    unsigned char* data;
    size_t bytes;
    size_t offset;
    Request id;
    const Reducer* reducer;
    CallStampWords expected;
  };
  bool progress();  ///< consumes published slots; true if any slot was consumed
  /// Checks a slot's crc (when it has one, or when this side insists); throws PeerError naming the link.
  void verify(const SlotInfo& slot, const unsigned char* data, uint64_t message) const;
  /// Checks a slot's call stamp against the posted receive's; throws PeerError naming both calls.
  void checkStamp(const SlotInfo& slot, const Pending& m) const;

  std::deque<Pending> queue_;
  Request lastIssued_ = 0;
  Request lastDone_ = 0;
  uint64_t tail_ = 0;
};

}  // namespace hetccl::transport::shm
