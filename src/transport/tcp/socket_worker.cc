#include "transport/tcp/socket_worker.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "transport/base/crc32c.hpp"
#include "transport/base/integrity.hpp"
#include "transport/tcp/tcp_piece.hpp"

namespace hetccl::transport::tcp {

SocketWorker::SocketWorker(net::Socket socket, Direction direction, std::string label, const PeerInfo& peer,
                           const std::atomic<bool>* abortFlag, RequestTracker& tracker, bool checksum)
    : socket_(std::move(socket)),
      direction_(direction),
      label_(std::move(label)),
      peer_(peer),
      abortFlag_(abortFlag),
      tracker_(tracker),
      checksum_(checksum),
      thread_([this] { run(); }) {}

SocketWorker::~SocketWorker() { stop(); }

void SocketWorker::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SocketWorker::post(const Piece& piece) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(piece);
  }
  wake_.notify_one();
}

void SocketWorker::run() {
  while (true) {
    Piece piece{};
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      piece = queue_.front();
    }
    try {
      move(piece);
    } catch (const Stopping&) {
      return;
    } catch (const AbortedError&) {
      tracker_.fail(std::current_exception());
      return;
    } catch (const std::exception& e) {  // EOF, reset, I/O error (already naming label_): the peer is gone
      tracker_.fail(std::make_exception_ptr(PeerError(peer_.rank, peer_.hostId, e.what())));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.pop_front();
    }
    tracker_.pieceDone(piece.request);
  }
}

void SocketWorker::move(const Piece& p) {
  if (direction_ == Direction::Send) sendPiece(p);
  else if (p.reducer) recvReduced(p);
  else recvPiece(p);
}

void SocketWorker::throwIfStopping() const {
  if (stop_.load(std::memory_order_relaxed)) throw Stopping{};
  if (abortFlag_ && abortFlag_->load(std::memory_order_acquire))
    throw AbortedError(concat(label_, ": communicator aborted"));
}

void SocketWorker::waitReady(short events) {
  while (true) {
    throwIfStopping();
    pollfd p{socket_.fd(), events, 0};
    int rc = ::poll(&p, 1, kPollMs);
    if (rc > 0) return;  // ready, or an error/hang-up that the next send/recv reports
    if (rc < 0 && errno != EINTR) throw SystemError::fromErrno(concat(label_, ": poll"), errno);
  }
}

void SocketWorker::sendBytes(const unsigned char* data, size_t bytes, bool more) {
  for (size_t sent = 0; sent < bytes;) {
    throwIfStopping();  // data may keep flowing: waitReady alone would not notice stop() or abort
    size_t n = socket_.sendSome(data + sent, bytes - sent, label_, more);
    if (n == 0) waitReady(POLLOUT);
    sent += n;
  }
}

void SocketWorker::recvBytes(unsigned char* data, size_t bytes) {
  for (size_t got = 0; got < bytes;) {
    throwIfStopping();
    size_t n = socket_.recvSome(data + got, bytes - got, label_);
    if (n == 0) waitReady(POLLIN);
    got += n;
  }
}

void SocketWorker::sendPiece(const Piece& p) {
  PieceHeader h;
  h.number = p.number;
  h.messageBytes = p.messageBytes;
  h.pieceBytes = p.bytes;
  h.stamp = p.stamp;
  if (checksum_) {
    h.flags = kPieceHasCrc;
    h.crc = crc32c(0, p.data, p.bytes);
  }
  const auto header = h.encode();
  sendBytes(header.data(), header.size(), p.bytes > 0);
  if (p.bytes > 0 && testing::takeCorruption()) {  // test hook: the link flips a bit on the way
    std::vector<unsigned char> copy(p.data, p.data + p.bytes);
    copy[copy.size() / 2] ^= 0x10;
    sendBytes(copy.data(), copy.size(), false);
    return;
  }
  sendBytes(p.data, p.bytes, false);
}

std::optional<uint32_t> SocketWorker::recvHeader(const Piece& p) {
  std::array<unsigned char, PieceHeader::kWireBytes> wire;
  recvBytes(wire.data(), wire.size());
  std::string problem;
  std::optional<PieceHeader> h = PieceHeader::decode(wire.data(), problem);
  if (h && h->stamp != p.stamp) {  // another call's message: say which calls, not only which sizes
    std::optional<CallStamp> sent = decodeCallStampWords(h->stamp, &problem);
    if (sent)
      problem = concat(callMismatchMessage(peer_.rank, *sent, decodeCallStampWords(p.stamp).value_or(CallStamp{})),
                       ": the ranks' calls disagree");
  } else if (h) {
    problem = pieceMismatch(*h, p.number, p.messageBytes, p.bytes);
  }
  if (!problem.empty()) throw PeerError(peer_.rank, peer_.hostId, concat(label_, ": ", problem));
  if (h->flags & kPieceHasCrc) return h->crc;
  if (checksum_)
    throw PeerError(peer_.rank, peer_.hostId,
                    concat(label_, ": the sender sends no checksums but HETCCL_CHECKSUM=1 here: set it alike on every rank"));
  return std::nullopt;
}

void SocketWorker::verify(const Piece& p, std::optional<uint32_t> expected, uint32_t actual) const {
  if (!expected || *expected == actual) return;
  throw PeerError(peer_.rank, peer_.hostId,
                  concat(label_, ": checksum mismatch in piece ", p.number, " (", p.bytes, " bytes of a ",
                         p.messageBytes, "-byte message): the sender's crc32c is 0x", std::hex, *expected,
                         ", the bytes that arrived have 0x", actual, std::dec,
                         ": data was corrupted between rank ", peer_.rank, " and this rank (HETCCL_CHECKSUM)"));
}

void SocketWorker::recvPiece(const Piece& p) {
  std::optional<uint32_t> expected = recvHeader(p);
  recvBytes(p.data, p.bytes);
  if (expected) verify(p, expected, crc32c(0, p.data, p.bytes));
}

// Receives into the bounce buffer and reduces whole elements into the destination; a partial element
// stays at the front of the buffer until its remaining bytes arrive. The checksum covers the bytes as
// they arrived, before the reduction.
void SocketWorker::recvReduced(const Piece& p) {
  std::optional<uint32_t> expected = recvHeader(p);
  uint32_t crc = 0;
  const size_t elem = p.reducer->elemSize;
  if (bounce_.empty()) bounce_.resize(kBounceBytes);
  const size_t usable = std::max(elem, bounce_.size() - bounce_.size() % elem);
  if (bounce_.size() < usable) bounce_.resize(usable);
  size_t received = 0, reduced = 0, filled = 0;
  while (reduced < p.bytes) {
    throwIfStopping();
    size_t n = socket_.recvSome(bounce_.data() + filled, std::min(usable - filled, p.bytes - received), label_);
    if (n == 0) {
      waitReady(POLLIN);
      continue;
    }
    if (expected) crc = crc32c(crc, bounce_.data() + filled, n);
    filled += n;
    received += n;
    size_t whole = filled - filled % elem;
    if (whole == 0) continue;
    p.reducer->fn(p.data + reduced, bounce_.data(), whole / elem, p.reducer->ctx);
    reduced += whole;
    std::memmove(bounce_.data(), bounce_.data() + whole, filled - whole);
    filled -= whole;
  }
  verify(p, expected, crc);
}

}  // namespace hetccl::transport::tcp
