// Accepts connections on a listener and authenticates them concurrently (ServerHandshake per
// connection), so that one slow, silent or hostile client never blocks the others. Driven by the
// owner's poll loop: appendPollFds() before poll(), service() after it.
//
// Defences: at most `maxPending` handshakes in flight (the oldest is dropped to make room), each with
// its own short deadline; anything that fails the handshake (garbage, HTTP, wrong secret, unexpected
// rank, silence) is closed and logged at INFO, and accepting goes on.
#pragma once

#include <poll.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/handshake.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

struct AuthenticatedPeer {
  net::Socket socket;
  int rank = -1;  ///< the rank the client proved inside the handshake
};

class AuthenticatingAcceptor {
 public:
  /// `listener` and `secret` must outlive the acceptor.
  AuthenticatingAcceptor(const net::Listener& listener, const Secret& secret, Purpose purpose, int serverRank,
                         ServerHandshake::RankCheck rankAllowed, size_t maxPending = 64,
                         int handshakeTimeoutMs = kHandshakeTimeoutMs);

  /// Appends the listener's and every pending handshake's pollfd; returns how many were appended.
  size_t appendPollFds(std::vector<pollfd>& fds) const;
  /// After poll(): `fds` points at the entries appendPollFds() added. Accepts new connections, advances
  /// handshakes, drops failed and expired ones; returns the connections that completed authentication.
  /// Throws net::DescriptorsExhausted when accept() found no descriptor left (after returning the
  /// connections of that round first: then at the next call).
  std::vector<AuthenticatedPeer> service(const pollfd* fds);
  size_t pending() const { return pending_.size(); }
  /// How many connections failed their handshake (wrong secret, garbage, too slow), and the last one
  /// ("127.0.0.1:4242: wrong proof (...)"): the deadline's report names the likely cause with it.
  size_t failedHandshakes() const { return failed_; }
  const std::string& lastFailedHandshake() const { return lastFailed_; }

  /// The first client that spoke the protocol and failed on its proof alone: it claimed `rank` and holds
  /// another secret (`what`: its address and the reason); `at` is when. Most likely a rank of this job
  /// started with another HETCCL_SECRET or unique id (RendezvousRoot fails the job when that rank has
  /// not joined HETCCL_AUTH_FAILURE_GRACE later).
  struct WrongSecret {
    int rank = -1;
    std::string what;
    std::chrono::steady_clock::time_point at;
  };
  const std::optional<WrongSecret>& firstWrongSecret() const { return wrongSecret_; }

 private:
  void acceptNew(std::vector<AuthenticatedPeer>& done);
  /// Files a handshake after progress(): into `done`, dropped, or back into pending_.
  void finish(std::unique_ptr<ServerHandshake> h, ServerHandshake::Status status, std::vector<AuthenticatedPeer>& done);
  void drop(ServerHandshake& h, const std::string& why);

  const net::Listener& listener_;
  const Secret& secret_;
  Purpose purpose_;
  int serverRank_;
  ServerHandshake::RankCheck rankAllowed_;
  size_t maxPending_;
  int handshakeTimeoutMs_;
  std::deque<std::unique_ptr<ServerHandshake>> pending_;  // oldest first
  std::optional<net::DescriptorsExhausted> exhausted_;    // from acceptNew(), thrown by service()
  size_t failed_ = 0;
  std::string lastFailed_;
  std::optional<WrongSecret> wrongSecret_;
};

}  // namespace hetccl::bootstrap
