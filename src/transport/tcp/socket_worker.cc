#include "transport/tcp/socket_worker.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace hetccl::transport::tcp {

SocketWorker::SocketWorker(net::Socket socket, Direction direction, std::string label, const PeerInfo& peer,
                           const std::atomic<bool>* abortFlag, RequestTracker& tracker)
    : socket_(std::move(socket)),
      direction_(direction),
      label_(std::move(label)),
      peer_(peer),
      abortFlag_(abortFlag),
      tracker_(tracker),
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

void SocketWorker::sendPiece(const Piece& p) {
  for (size_t sent = 0; sent < p.bytes;) {
    throwIfStopping();  // data may keep flowing: waitReady alone would not notice stop() or abort
    size_t n = socket_.sendSome(p.data + sent, p.bytes - sent, label_);
    if (n == 0) waitReady(POLLOUT);
    sent += n;
  }
}

void SocketWorker::recvPiece(const Piece& p) {
  for (size_t got = 0; got < p.bytes;) {
    throwIfStopping();
    size_t n = socket_.recvSome(p.data + got, p.bytes - got, label_);
    if (n == 0) waitReady(POLLIN);
    got += n;
  }
}

// Receives into the bounce buffer and reduces whole elements into the destination; a partial element
// stays at the front of the buffer until its remaining bytes arrive.
void SocketWorker::recvReduced(const Piece& p) {
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
    filled += n;
    received += n;
    size_t whole = filled - filled % elem;
    if (whole == 0) continue;
    p.reducer->fn(p.data + reduced, bounce_.data(), whole / elem, p.reducer->ctx);
    reduced += whole;
    std::memmove(bounce_.data(), bounce_.data() + whole, filled - whole);
    filled -= whole;
  }
}

}  // namespace hetccl::transport::tcp
