// One thread per tcp socket doing that socket's blocking I/O: it sends (or receives) the pieces posted
// to it, in order, polling with short timeouts so that shutdown and abort are noticed promptly. Every
// piece travels behind a header (tcp_piece.hpp) that the receiving worker checks before the payload.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/peer_info.hpp"
#include "net/socket.hpp"
#include "transport/base/transport.hpp"
#include "transport/tcp/request_tracker.hpp"

namespace hetccl::transport::tcp {

/// A stretch of one message that travels on one socket.
struct Piece {
  unsigned char* data;     ///< send: source; recv: destination
  size_t bytes;
  Request request;
  const Reducer* reducer;  ///< recv only: accumulate instead of storing
  uint64_t number;         ///< piece number on the connection
  uint64_t messageBytes;   ///< size of the whole message
  CallStampWords stamp;    ///< send: the message's call stamp; recv: the stamp the receive expects
};

class SocketWorker {
 public:
  enum class Direction { Send, Recv };
  static constexpr int kPollMs = 50;
  static constexpr size_t kBounceBytes = 256 * 1024;  ///< staging for reducing receives

  /// Starts the thread. `label` names the socket in errors ("tcp send to rank 3 (host h), socket 1 of 4").
  /// Completed pieces and failures (PeerError naming `peer`, or AbortedError) go to `tracker`.
  /// `checksum`: send a CRC32C with every piece / insist on receiving one (HETCCL_CHECKSUM).
  SocketWorker(net::Socket socket, Direction direction, std::string label, const PeerInfo& peer,
               const std::atomic<bool>* abortFlag, RequestTracker& tracker, bool checksum);
  /// stop(), then closes the socket.
  ~SocketWorker();
  SocketWorker(const SocketWorker&) = delete;
  SocketWorker& operator=(const SocketWorker&) = delete;

  /// Queues a piece behind the ones already posted. Pieces posted after stop() are never moved.
  void post(const Piece& piece);
  /// Makes the thread give up the piece in progress and every queued one, within about kPollMs, and
  /// joins it: on return no piece's buffer or Reducer is touched again. Idempotent; must not be called
  /// concurrently with itself or the destructor. The byte stream is left mid-piece (unusable).
  void stop() noexcept;

 private:
  struct Stopping {};  // thrown inside the thread once stop() asks it to stop

  void run();
  void move(const Piece& p);
  void sendPiece(const Piece& p);
  void recvPiece(const Piece& p);
  void recvReduced(const Piece& p);
  void sendBytes(const unsigned char* data, size_t bytes, bool more);
  void recvBytes(unsigned char* data, size_t bytes);
  /// Reads and checks the header of piece `p`; returns the crc the payload must have (when it has one).
  std::optional<uint32_t> recvHeader(const Piece& p);
  /// Throws PeerError naming the link when the payload's crc differs from the header's.
  void verify(const Piece& p, std::optional<uint32_t> expected, uint32_t actual) const;
  void waitReady(short events);  ///< polls in kPollMs steps; throws Stopping / AbortedError
  void throwIfStopping() const;  ///< throws Stopping once stop() was called, AbortedError once aborted

  net::Socket socket_;
  Direction direction_;
  std::string label_;
  PeerInfo peer_;
  const std::atomic<bool>* abortFlag_;
  RequestTracker& tracker_;
  bool checksum_;
  std::vector<unsigned char> bounce_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Piece> queue_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace hetccl::transport::tcp
