// The two ends of one ucx connection: one UCP endpoint each (the sender's from ucp_ep_create on the
// peer's listener address, the receiver's from the listener's connection request), tagged messages on
// the communicator's worker (ucx_wire.hpp: a header message and a payload message per piece).
//
// Send: isend() posts every piece's header and payload at once (UCP picks eager or rendezvous; with
// rendezvous the payload moves from the caller's buffer without a copy). Receive: irecv() posts every
// piece's header receive into the connection's own memory; test() checks each header as it arrives
// (number, sizes, token, call stamp, checksum flag) and only then posts the payload's receive, straight
// into the caller's buffer -- or, for a reducing receive, into one of kStagingPieces staging buffers
// that are reduced into the caller's buffer when they complete. test() progresses the worker, advances
// every request of the connection (any test order completes them all) and reports failures: the
// endpoint's error (peer died, closed or unreachable: PeerError naming the peer), a failed operation,
// a mismatching header, the abort flag (AbortedError).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "transport/base/transport.hpp"
#include "transport/ucx/ucx_wire.hpp"
#include "transport/ucx/ucx_worker.hpp"

namespace hetccl::transport::ucx {

class UcxConnBase {
 protected:
  UcxConnBase(std::shared_ptr<Worker> worker, void* ep, EpState* state, const ConnectInfo& info, std::string label,
              int senderRank);
  ~UcxConnBase();

  /// Rethrows the connection's failure; records one first when the endpoint failed or the communicator
  /// was aborted. Caller holds the worker's mutex.
  void checkHealthLocked();
  /// Records `failure` (the first one wins) and throws the recorded one. Caller holds the worker's mutex.
  [[noreturn]] void failLocked(std::exception_ptr failure);
  [[noreturn]] void failPeerLocked(const std::string& what);
  /// Throws InvalidArgument for a request that was never issued; true when `r` is no longer open.
  bool isClosed(Request r, bool open) const;
  /// Gives up every operation still owned by UCP (cancel; force-closes the endpoint) and waits, boundedly,
  /// until UCP has let go of them; what remains is handed to the worker. Caller holds the worker's mutex.
  /// Each op comes with what UCP may still read or write besides the caller's buffers (its piece).
  using OwnedOps = std::vector<std::pair<std::unique_ptr<Op>*, std::shared_ptr<void>>>;
  void releaseOpsLocked(OwnedOps ops) noexcept;
  /// abandon() of either side: records AbortedError("ucx connection <direction> rank N: outstanding
  /// requests were abandoned") unless a failure is recorded already, releases `ops` (the side's
  /// opsLocked()) and has the endpoint force-closed. Caller holds the worker's mutex.
  void abandonLocked(const char* direction, OwnedOps ops) noexcept;
  /// Destruction of either side: releases `ops` and closes the endpoint (forcibly after a failure).
  /// Caller holds the worker's mutex.
  void closeLocked(OwnedOps ops) noexcept;

  std::shared_ptr<Worker> worker_;
  void* ep_;
  EpState* state_;
  ConnectInfo info_;
  std::string label_;
  uint64_t tagBase_;
  bool checksum_;
  uint64_t nextPiece_ = 0;
  Request lastIssued_ = 0;
  std::exception_ptr failure_;
  bool forceClose_ = false;
};

class UcxSendConn final : public SendConn, private UcxConnBase {
 public:
  /// `ep` was created to the peer's listener; sends the hello (connect side) right away.
  UcxSendConn(std::shared_ptr<Worker> worker, void* ep, EpState* state, const ConnectInfo& info);
  ~UcxSendConn() override;
  Request isend(const void* data, size_t bytes, const CallStamp& stamp = {}) override;
  bool test(Request r) override;
  void abandon() noexcept override;

 private:
  struct Piece {
    std::array<unsigned char, PieceHeader::kWireBytes> header{};
    std::vector<unsigned char> corrupted;  // test hook: the bytes sent instead of the caller's
    std::unique_ptr<Op> headerOp, payloadOp;
  };
  void advanceLocked();
  OwnedOps opsLocked();

  std::shared_ptr<std::array<unsigned char, Hello::kWireBytes>> hello_;
  std::unique_ptr<Op> helloOp_;
  std::map<Request, std::vector<std::shared_ptr<Piece>>> open_;
};

class UcxRecvConn final : public RecvConn, private UcxConnBase {
 public:
  /// `ep` came from the listener, whose hello named this connection's peer and token.
  UcxRecvConn(std::shared_ptr<Worker> worker, void* ep, EpState* state, const ConnectInfo& info);
  ~UcxRecvConn() override;
  Request irecv(void* data, size_t bytes, const Reducer* reducer = nullptr, const CallStamp& expected = {}) override;
  bool test(Request r) override;
  void abandon() noexcept override;

  static constexpr int kStagingPieces = 4;

 private:
  enum class Stage { Header, Checked, Payload, Done };
  struct Piece {
    uint64_t number = 0;
    size_t offset = 0, bytes = 0;
    Stage stage = Stage::Header;
    std::array<unsigned char, PieceHeader::kWireBytes> header{};
    std::optional<uint32_t> crc;
    int staging = -1;
    std::unique_ptr<Op> headerOp, payloadOp;
  };
  struct Message {
    unsigned char* data = nullptr;
    size_t bytes = 0;
    const Reducer* reducer = nullptr;
    CallStampWords expected{};
    std::vector<std::shared_ptr<Piece>> pieces;
    size_t done = 0;
  };
  void advanceLocked();
  void advance(Message& m, Piece& p);
  void checkHeader(const Message& m, Piece& p);
  OwnedOps opsLocked();

  std::map<Request, Message> open_;
  /// Staging buffers of reducing receives (shared with ops handed to the worker).
  std::shared_ptr<std::vector<std::vector<unsigned char>>> staging_;
  std::vector<bool> stagingUsed_;
};

}  // namespace hetccl::transport::ucx
