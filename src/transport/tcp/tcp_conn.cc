#include "transport/tcp/tcp_conn.hpp"

#include "core/config.hpp"
#include "core/error.hpp"
#include "transport/base/integrity.hpp"
#include "transport/tcp/tcp_striping.hpp"

namespace hetccl::transport::tcp {

TcpConnBase::TcpConnBase(std::vector<net::Socket> sockets, const ConnectInfo& info, SocketWorker::Direction direction)
    : info_(info) {
  const bool send = direction == SocketWorker::Direction::Send;
  const bool checksum = checksumsEnabled();
  const int64_t timeoutMs = config().timeoutMs();
  for (size_t i = 0; i < sockets.size(); ++i) {
    std::string label = concat("tcp ", send ? "send from rank " : "recv at rank ", info.self.rank,
                               send ? " to rank " : " from rank ", info.peer.rank, " (host '", info.peer.hostId,
                               "'), socket ", i, " of ", sockets.size());
    sockets[i].setKeepalive(timeoutMs);  // a vanished host fails the socket after HETCCL_TIMEOUT, never sooner
    workers_.push_back(std::make_unique<SocketWorker>(std::move(sockets[i]), direction, std::move(label), info.peer,
                                                      info.abortFlag, tracker_, checksum));
  }
}

Request TcpConnBase::post(unsigned char* data, size_t bytes, const Reducer* reducer, const CallStamp& stamp) {
  const CallStampWords words = callStampWords(stamp);
  tracker_.rethrowIfFailed();
  const size_t n = workers_.size();
  if (bytes == 0) {  // one header-only piece: the receiver checks empty messages too
    const Request r = tracker_.issue(1);
    workers_[nextPiece_ % n]->post(Piece{data, 0, r, reducer, nextPiece_, 0, words});
    ++nextPiece_;
    return r;
  }
  const size_t piece = pieceBytes(bytes, n);
  const Request r = tracker_.issue(pieceCount(bytes, n));
  for (size_t offset = 0; offset < bytes; offset += piece) {
    workers_[nextPiece_ % n]->post(Piece{data + offset, std::min(piece, bytes - offset), r, reducer, nextPiece_, bytes, words});
    ++nextPiece_;
  }
  return r;
}

bool TcpConnBase::testRequest(Request r) {
  if (tracker_.done(r)) return true;
  if (info_.abortFlag && info_.abortFlag->load(std::memory_order_acquire)) {
    tracker_.fail(std::make_exception_ptr(
        AbortedError(concat("tcp connection with rank ", info_.peer.rank, ": communicator aborted"))));
    tracker_.done(r);  // rethrows whichever failure was recorded first
  }
  return false;
}

void TcpConnBase::abandonRequests() noexcept {
  try {
    tracker_.fail(std::make_exception_ptr(AbortedError(
        concat("tcp connection with rank ", info_.peer.rank, ": outstanding requests were abandoned"))));
  } catch (...) {  // out of memory: stopping the workers below matters more than the message
  }
  for (auto& worker : workers_) worker->stop();
}

Request TcpSendConn::isend(const void* data, size_t bytes, const CallStamp& stamp) {
  if (!data && bytes > 0) throw InvalidArgument(concat("tcp isend to rank ", info_.peer.rank, ": null buffer"));
  return post(static_cast<unsigned char*>(const_cast<void*>(data)), bytes, nullptr, stamp);
}

Request TcpRecvConn::irecv(void* data, size_t bytes, const Reducer* reducer, const CallStamp& expected) {
  const int peer = info_.peer.rank;
  if (!data && bytes > 0) throw InvalidArgument(concat("tcp irecv from rank ", peer, ": null buffer"));
  if (reducer) {
    if (!reducer->fn || reducer->elemSize == 0 || 64 % reducer->elemSize != 0)
      throw InvalidArgument(concat("tcp irecv from rank ", peer, ": reducer needs a function and an element size",
                                   " dividing 64 (got ", reducer->elemSize, ")"));
    if (bytes % reducer->elemSize != 0)
      throw InvalidArgument(concat("tcp irecv from rank ", peer, ": ", bytes, " bytes is not a whole number of ",
                                   reducer->elemSize, "-byte elements"));
  }
  return post(static_cast<unsigned char*>(data), bytes, reducer, expected);
}

}  // namespace hetccl::transport::tcp
