#include "transport/tcp/tcp_transport.hpp"

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "transport/tcp/tcp_conn.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "transport/tcp/tcp_listener.hpp"

namespace hetccl::transport {
namespace {

using tcp::Hello;
using tcp::TcpListener;

class TcpTransport final : public Transport {
 public:
  std::string_view name() const override { return "tcp"; }
  bool canConnect(const PeerInfo&, const PeerInfo&) const override { return true; }

  std::unique_ptr<Listener> listen(const PeerInfo& self) override { return std::make_unique<TcpListener>(self); }

  std::unique_ptr<SendConn> connect(const Handle& peerHandle, const ConnectInfo& info, Deadline deadline) override {
    const net::SocketAddress to = tcp::decodeAddressHandle(peerHandle);
    const auto count = static_cast<uint16_t>(config().integer("HETCCL_TCP_SOCKETS", 1, tcp::kMaxSockets));
    const std::string where = concat("tcp connect to rank ", info.peer.rank, " at ", to.toString());
    std::vector<net::Socket> sockets;
    try {
      for (uint16_t i = 0; i < count; ++i) {
        if (info.abortFlag && info.abortFlag->load(std::memory_order_acquire))
          throw AbortedError(concat(where, ": communicator aborted"));
        // The peer's listener exists before its handle is published and until every peer has connected:
        // a refusal means the peer is gone, so it is an error at once (PeerError), not a retry.
        net::Socket s = net::Socket::connect(to, deadline, false);
        Hello hello{i, count, info.self.rank, info.peer.rank, info.token};
        auto wire = hello.encode();
        s.sendAll(wire.data(), wire.size(), deadline, where);  // fits the socket buffer: no wait on accept()
        sockets.push_back(std::move(s));
      }
    } catch (const AbortedError&) {
      throw;
    } catch (const TimeoutError& e) {
      throw TimeoutError(info.peer.rank, info.peer.hostId, concat(where, " (host '", info.peer.hostId, "'): ", e.what()));
    } catch (const PeerError& e) {
      throw PeerError(info.peer.rank, info.peer.hostId, concat(where, " (host '", info.peer.hostId, "'): ", e.what()));
    } catch (const SystemError& e) {  // e.g. unreachable network: still an error about this peer
      throw PeerError(info.peer.rank, info.peer.hostId, concat(where, " (host '", info.peer.hostId, "'): ", e.what()));
    }
    HETCCL_INFO(log::kNet, "tcp: rank ", info.self.rank, " connected to rank ", info.peer.rank, " at ",
                to.toString(), " with ", count, " sockets");
    return std::make_unique<tcp::TcpSendConn>(std::move(sockets), info);
  }

  std::unique_ptr<RecvConn> accept(Listener& listener, const ConnectInfo& info, Deadline deadline) override {
    auto* own = dynamic_cast<TcpListener*>(&listener);
    if (!own) throw InvalidArgument("tcp accept: the listener was not created by the tcp transport");
    std::vector<net::Socket> sockets = own->acceptPeer(info, deadline);
    HETCCL_INFO(log::kNet, "tcp: rank ", info.self.rank, " accepted rank ", info.peer.rank, " with ",
                sockets.size(), " sockets");
    return std::make_unique<tcp::TcpRecvConn>(std::move(sockets), info);
  }
};

}  // namespace

std::unique_ptr<Transport> makeTcpTransport() { return std::make_unique<TcpTransport>(); }

}  // namespace hetccl::transport
