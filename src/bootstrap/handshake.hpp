// Mutual HMAC-SHA256 challenge-response run on every bootstrap connection before anything is allocated
// for it. Wire (little-endian):
//   client -> server  ClientHello  44 bytes: u32 magic 'HCHS' | u16 version | u16 purpose | i32 client rank | nonceC[32]
//   server -> client  ServerHello  76 bytes: u32 magic 'HCHS' | u16 version | u16 purpose | i32 server rank | nonceS[32] | macS[32]
//   client -> server  ClientProof  32 bytes: macC
// macS = HMAC(secret, "hetccl bootstrap v1 server proof" | ClientHello | ServerHello[0..44))
// macC = HMAC(secret, "hetccl bootstrap v1 client proof" | ClientHello | ServerHello[0..44))
// Both nonces are fresh random bytes, so a proof cannot be replayed, and the labels keep one side's proof
// from serving as the other's. The ranks inside the hellos are covered by both proofs.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <string>

#include "bootstrap/crypto.hpp"
#include "core/deadline.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

enum class Purpose : uint16_t {
  Root = 1,  ///< rank -> rendezvous root (server rank -1)
  Mesh = 2,  ///< higher rank -> lower rank's mesh listener
};

inline constexpr size_t kClientHelloBytes = 44;
inline constexpr size_t kServerHelloBytes = 76;
inline constexpr size_t kProofBytes = 32;
inline constexpr int kHandshakeTimeoutMs = 5000;

/// Client side (blocking until `deadline`). `serverRank` is the rank expected at the other end (-1 for
/// the root). Throws InvalidArgument when the server's proof is wrong (it holds another secret),
/// PeerError when it closes the connection (it rejected us), TimeoutError at the deadline.
void authenticateAsClient(const net::Socket& s, const Secret& secret, Purpose purpose, int myRank, int serverRank,
                          Deadline deadline, const std::string& peer);

/// Server side of one connection as a non-blocking state machine driven by the caller's poll loop.
class ServerHandshake {
 public:
  enum class Status { InProgress, Done, Failed };
  using RankCheck = std::function<bool(int)>;

  /// `rankAllowed(rank)` is asked once the client names its rank; false rejects the client. `secret`
  /// must outlive this object.
  ServerHandshake(net::Socket s, const Secret& secret, Purpose purpose, int serverRank, RankCheck rankAllowed,
                  Deadline deadline);

  /// Events to poll for now (POLLIN or POLLOUT).
  short pollEvents() const { return state_ == State::WriteServerHello ? POLLOUT : POLLIN; }
  /// Advances as far as possible without blocking. On Failed, reason() says why (for INFO logs).
  Status progress();
  bool expired() const { return deadline_.expired(); }
  int fd() const { return socket_.fd(); }
  /// The rank the client proved it holds (valid once progress() returned Done).
  int clientRank() const { return clientRank_; }
  const std::string& reason() const { return reason_; }
  /// Failed on the proof alone: the client spoke the protocol, claimed clientRank(), and holds another secret.
  bool wrongProof() const { return wrongProof_; }
  /// "client 1.2.3.4:5678" for log lines.
  const std::string& describe() const { return describe_; }
  net::Socket takeSocket() { return std::move(socket_); }

 private:
  enum class State { ReadHello, WriteServerHello, ReadProof, Done, Failed };
  Status fail(std::string why);
  bool readInto(size_t want);
  Status onHello();
  Status onProof();

  net::Socket socket_;
  const Secret& secret_;
  Purpose purpose_;
  int serverRank_;
  RankCheck rankAllowed_;
  Deadline deadline_;
  std::string describe_;
  State state_ = State::ReadHello;
  unsigned char in_[kClientHelloBytes] = {};
  size_t have_ = 0;
  unsigned char clientHello_[kClientHelloBytes] = {};
  unsigned char serverHello_[kServerHelloBytes] = {};
  size_t sent_ = 0;
  int clientRank_ = -1;
  bool wrongProof_ = false;
  std::string reason_;
};

}  // namespace hetccl::bootstrap
