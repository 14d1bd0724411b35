// The payload between agents of different hosts over UCX (HETCCL_UCX, as for communicators): a connection
// whose two ends both allow it carries its requests, replies and notifications over its tcp socket as
// always, and its payload over a pair of UCX connections (the transport's tagged messages: RDMA
// rendezvous where the hosts have RDMA devices), one per direction: the initiator's for written data,
// the target's for read data.
//
// Set-up, after the handshake agreed to it (Hello kOfferUcx, Accept kAcceptUcx): each side sends over the
// authenticated socket what the other needs to connect to it (its agent's UCX listener address, and the
// sender rank and token it expects from the other side: NetExpect), both connect, then both accept
// (transport contract: connect never waits, so neither side can deadlock). An agent's UCX transport and
// listener are created at its first such connection and shared by all of them; the listener tells its
// incoming connections apart by the sender rank it handed out (1..2^20-1, one per connection, reused only
// after a million connections) and refuses a wrong token.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/deadline.hpp"
#include "net/socket.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::agent {

/// Whether this agent's payload may cross UCX: transport::ucxPolicy() allows it (the communicators' rule)
/// and libucp loads. `why` says why not (logged at INFO).
bool ucxAllowed(std::string* why);

/// A connection's two UCX connections: `send` carries this side's payload, `recv` the peer's.
struct NetPair {
  std::unique_ptr<transport::SendConn> send;
  std::unique_ptr<transport::RecvConn> recv;
  explicit operator bool() const { return send && recv; }
  /// Gives up anything in flight (no buffer is touched after it) and closes both.
  void close() noexcept;
};

/// One agent's UCX transport and listener (created at the first use; thread-safe).
class NetLinks {
 public:
  explicit NetLinks(std::string agentName) : agentName_(std::move(agentName)) {}
  ~NetLinks();
  NetLinks(const NetLinks&) = delete;
  NetLinks& operator=(const NetLinks&) = delete;

  /// Whether this agent can take UCX connections: creates the transport and listener at the first call;
  /// false (logged once, and from then on) when UCX fails here, so that the handshake does not agree to it.
  bool usable();

  /// Initiator side, after the handshake agreed to UCX: the exchange over `sock` (which must be in step:
  /// nothing else in flight), connect, accept. Throws (PeerError naming `peer`, SystemError when UCX
  /// fails here) -- the connection is then unusable.
  NetPair initiate(const net::Socket& sock, Deadline d, const std::string& peer, const std::string& peerHost);
  /// The target's side of the same.
  NetPair answer(const net::Socket& sock, Deadline d, const std::string& peer, const std::string& peerHost);

 private:
  struct Expect {  ///< what a peer needs to connect to this agent's listener
    transport::Handle handle;
    int32_t rank = 0;  ///< the sender rank it must present
    uint64_t token = 0;
  };
  Expect expect();
  NetPair link(const net::Socket& sock, Deadline d, const std::string& peer, const std::string& peerHost, bool initiator);

  std::string agentName_;
  std::mutex mu_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<transport::Listener> listener_;
  uint32_t nextRank_ = 0;
  bool failed_ = false;  ///< creating the transport or listener failed: usable() stays false
};

}  // namespace hetccl::agent
