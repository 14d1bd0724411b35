// The two ends of one tcp connection: N sockets, one SocketWorker thread each. isend/irecv cut the
// message into pieces (tcp_striping.hpp) and queue each piece on its socket's worker; test() only looks
// at the bookkeeping, so it never blocks.
#pragma once

#include <memory>
#include <vector>

#include "net/socket.hpp"
#include "transport/base/transport.hpp"
#include "transport/tcp/request_tracker.hpp"
#include "transport/tcp/socket_worker.hpp"

namespace hetccl::transport::tcp {

/// What both ends share: the workers, the request bookkeeping and the piece counter.
class TcpConnBase {
 protected:
  /// `sockets` are connected, hellos exchanged, ordered by socket index.
  TcpConnBase(std::vector<net::Socket> sockets, const ConnectInfo& info, SocketWorker::Direction direction);
  /// Splits a message into pieces over the sockets and returns its request.
  Request post(unsigned char* data, size_t bytes, const Reducer* reducer, const CallStamp& stamp);
  /// True once `r` completed; throws the connection's failure, or AbortedError once aborted.
  bool testRequest(Request r);
  /// Stops and joins every worker, so no posted buffer or Reducer is touched after return, and marks the
  /// connection failed (later calls throw; an earlier failure is kept).
  void abandonRequests() noexcept;

  ConnectInfo info_;
  RequestTracker tracker_;
  std::vector<std::unique_ptr<SocketWorker>> workers_;  // after tracker_: destroyed (joined) first
  uint64_t nextPiece_ = 0;
};

class TcpSendConn final : public SendConn, private TcpConnBase {
 public:
  TcpSendConn(std::vector<net::Socket> sockets, const ConnectInfo& info)
      : TcpConnBase(std::move(sockets), info, SocketWorker::Direction::Send) {}
  Request isend(const void* data, size_t bytes, const CallStamp& stamp = {}) override;
  bool test(Request r) override { return testRequest(r); }
  void abandon() noexcept override { abandonRequests(); }
};

class TcpRecvConn final : public RecvConn, private TcpConnBase {
 public:
  TcpRecvConn(std::vector<net::Socket> sockets, const ConnectInfo& info)
      : TcpConnBase(std::move(sockets), info, SocketWorker::Direction::Recv) {}
  Request irecv(void* data, size_t bytes, const Reducer* reducer = nullptr, const CallStamp& expected = {}) override;
  bool test(Request r) override { return testRequest(r); }
  void abandon() noexcept override { abandonRequests(); }
};

}  // namespace hetccl::transport::tcp
