// The two sides of a connection's handshake (wire.hpp): mutual proof of the secret, the target's
// incarnation checked, and the shared-memory windows of the connection agreed. Every step has the
// caller's deadline; a failure throws (PeerError naming the peer, or InvalidArgument for a refusal that
// says why: a stale incarnation, another secret, another version).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/metadata.hpp"
#include "core/deadline.hpp"
#include "net/socket.hpp"

namespace hetccl::agent {

struct InitiatorOffer {
  std::string name;            ///< this agent's name
  Incarnation self{};          ///< this agent's incarnation
  Incarnation expected{};      ///< the target's, from its blob
  bool wantWindows = false;    ///< offer shared-memory windows (agents of one host)
  bool offerPeerCopy = false;  ///< this side can export its device memory (agents of one host, peer_copy.hpp)
  bool offerUcx = false;       ///< this side allows the payload over UCX (agents of different hosts, net_link.hpp)
  /// Creates this side's window towards the target and returns its name ("" when it cannot); called only
  /// after the target proved the secret, so a stranger never makes this side create a segment.
  std::function<std::string()> createOut;
  /// Maps the target's window towards this side (name); false when it cannot (then the socket serves).
  std::function<bool(const std::string&)> openBack;
};

struct InitiatorOutcome {
  bool outWindowMapped = false;   ///< the target mapped the window createOut made
  bool backWindowMapped = false;  ///< this side mapped the target's
  bool peerCopy = false;          ///< the target copies device memory itself (only when offered)
  bool ucx = false;               ///< the payload crosses UCX (only when offered): NetLinks::initiate next
};

/// One handshake message on `sock`: a u32 length, then its bytes (at most kMaxHandshakeBytes). The
/// handshake's own messages, and the UCX set-up after it (net_link.hpp).
void sendHandshakeFrame(const net::Socket& sock, const std::vector<unsigned char>& bytes, Deadline d, const std::string& peer);
std::vector<unsigned char> recvHandshakeFrame(const net::Socket& sock, Deadline d, const std::string& peer);

/// `peer` names the target in errors ("agent 'prefill-0' at 10.0.0.1:4000").
InitiatorOutcome initiatorHandshake(const net::Socket& sock, const bootstrap::Secret& key, const InitiatorOffer& offer,
                                    Deadline deadline, const std::string& peer);

struct TargetSide {
  Incarnation self{};
  bool acceptPeerCopy = false;  ///< this side can map the initiator's device memory (when it offers it)
  /// Whether this side allows the payload over UCX with this initiator (when it offers it); called only
  /// after the initiator proved the secret.
  std::function<bool()> acceptUcx;
  /// Maps the initiator's window (name); false when it cannot.
  std::function<bool(const std::string&)> openOut;
  /// Creates this side's window towards the initiator and returns its name ("" none); called only
  /// after the initiator proved the secret, and only when it asked for windows.
  std::function<std::string()> createBack;
};

struct TargetOutcome {
  std::string peerName;
  Incarnation peerIncarnation{};
  bool outWindowMapped = false;
  bool backWindowMapped = false;
  bool peerCopy = false;  ///< offered and accepted: requests may carry kCopiedByTarget
  bool ucx = false;       ///< offered and accepted: NetLinks::answer next
};

/// `from` names the connecting address in errors.
TargetOutcome targetHandshake(const net::Socket& sock, const bootstrap::Secret& key, const TargetSide& side,
                              Deadline deadline, const std::string& from);

}  // namespace hetccl::agent
