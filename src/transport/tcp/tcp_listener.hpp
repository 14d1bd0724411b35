// The tcp transport's Listener: one bound net::Listener per communicator, plus the bookkeeping that
// lets many peers connect at once (each peer's sockets are collected for that peer's accept()).
#pragma once

#include <mutex>
#include <vector>

#include "core/peer_info.hpp"
#include "net/socket.hpp"
#include "transport/base/transport.hpp"
#include "transport/tcp/tcp_hello.hpp"

namespace hetccl::transport::tcp {

class TcpListener final : public Listener {
 public:
  /// Binds net::chooseLocalAddress() on an ephemeral port for rank `self`.
  explicit TcpListener(const PeerInfo& self);
  const Handle& handle() const override { return handle_; }

  /// Returns the sockets (ordered by socket index) that `info.peer` opened to this listener for
  /// `info.token`. Meanwhile accepts every arriving connection and reads its hello without blocking on
  /// any one client (each gets kHelloTimeoutMs); invalid hellos (garbage, wrong version, another
  /// receiver's rank, the right sender with a wrong token, duplicates) are closed and logged at INFO;
  /// valid sockets of other senders are kept for their own acceptPeer(). Throws TimeoutError naming the
  /// peer at the deadline and AbortedError once `info.abortFlag` is set. Thread-safe (calls serialise).
  std::vector<net::Socket> acceptPeer(const ConnectInfo& info, Deadline deadline);

  static constexpr int kHelloTimeoutMs = 5000;
  static constexpr size_t kMaxStashed = 1024;

 private:
  struct Incoming {  // accepted, hello not complete yet
    net::Socket socket;
    Deadline helloDeadline;
    std::string from;  // peer address, for logs
    std::array<unsigned char, Hello::kWireBytes> wire{};
    size_t got = 0;
  };
  struct Arrived {  // hello received and well-formed
    Hello hello;
    net::Socket socket;
    std::string from;
  };

  /// Moves the complete socket set of (peer, token) out of the stash, or returns an empty vector.
  std::vector<net::Socket> takeComplete(const ConnectInfo& info);
  void acceptPending();
  void readHellos(int waitMs);
  void admit(Incoming& in);

  PeerInfo self_;
  net::Listener listener_;
  Handle handle_;
  std::mutex mutex_;
  std::vector<Incoming> incoming_;
  std::vector<Arrived> stash_;
};

}  // namespace hetccl::transport::tcp
