#include "agent/handshake.hpp"

#include <cstring>
#include <vector>

#include "agent/byte_codec.hpp"
#include "agent/wire.hpp"
#include "core/error.hpp"

namespace hetccl::agent {

void sendHandshakeFrame(const net::Socket& sock, const std::vector<unsigned char>& b, Deadline d, const std::string& peer) {
  const uint32_t n = static_cast<uint32_t>(b.size());
  sock.sendAll(&n, sizeof n, d, peer);
  sock.sendAll(b.data(), b.size(), d, peer);
}

std::vector<unsigned char> recvHandshakeFrame(const net::Socket& sock, Deadline d, const std::string& peer) {
  uint32_t n = 0;
  sock.recvAll(&n, sizeof n, d, peer);
  if (n > kMaxHandshakeBytes)
    throw PeerError(-1, "", concat(peer, ": handshake message of ", n, " bytes (not a hetccl agent, or garbage)"));
  std::vector<unsigned char> b(n);
  sock.recvAll(b.data(), n, d, peer);
  return b;
}

namespace {


using Bytes = std::vector<unsigned char>;

std::span<const unsigned char> label(const char* s) { return {reinterpret_cast<const unsigned char*>(s), std::strlen(s)}; }

bootstrap::Mac mac(const bootstrap::Secret& key, const char* who, std::span<const unsigned char> a,
                   std::span<const unsigned char> b) {
  return bootstrap::hmacSha256(key, {label("hetccl agent handshake v1"), label(who), a, b});
}

std::array<unsigned char, 16> nonce() {
  std::array<unsigned char, 16> n{};
  bootstrap::randomBytes(n);
  return n;
}

}  // namespace

InitiatorOutcome initiatorHandshake(const net::Socket& sock, const bootstrap::Secret& key, const InitiatorOffer& offer,
                                    Deadline deadline, const std::string& peer) {
  ByteWriter hello;
  hello.put<uint32_t>(kHelloMagic);
  hello.put<uint32_t>(kProtocolVersion);
  hello.bytes(offer.self);
  hello.bytes(offer.expected);
  hello.bytes(nonce());
  hello.text(offer.name);
  hello.put<uint32_t>((offer.wantWindows ? kWantWindows : 0) | (offer.offerPeerCopy ? kOfferPeerCopy : 0) |
                      (offer.offerUcx ? kOfferUcx : 0));
  sendHandshakeFrame(sock, hello.data(), deadline, peer);

  const Bytes challenge = recvHandshakeFrame(sock, deadline, peer);
  ByteReader c(challenge, "agent handshake (challenge)");
  const auto status = static_cast<HelloStatus>(c.get<uint32_t>());
  if (status == HelloStatus::NotThisIncarnation)
    throw PeerError(-1, "", concat(peer, " is not the incarnation its metadata describes (it restarted since that blob was "
                                 "made): stale metadata, load its new blob"));
  if (status == HelloStatus::BadVersion) throw PeerError(-1, "", concat(peer, " speaks another agent protocol version"));
  if (status != HelloStatus::Ok) throw PeerError(-1, "", concat(peer, ": handshake refused (status ", static_cast<uint32_t>(status), ")"));
  Incarnation theirs{};
  std::memcpy(theirs.data(), c.bytes(theirs.size()).data(), theirs.size());
  (void)c.bytes(16);  // nonce_t (covered by the MACs)
  const size_t macAt = c.offset();
  bootstrap::Mac got{};
  std::memcpy(got.data(), c.bytes(got.size()).data(), got.size());
  const auto challengeBody = std::span<const unsigned char>(challenge).first(macAt);
  if (theirs != offer.expected || !bootstrap::macEqual(got, mac(key, "target", hello.data(), challengeBody)))
    throw PeerError(-1, "", concat(peer, " failed authentication: it holds another secret (or is not that agent)"));

  // The target is authentic: only now create the window, and name it inside the proof (covered by it).
  ByteWriter proof;
  proof.text(offer.wantWindows && offer.createOut ? offer.createOut() : std::string());
  const std::vector<unsigned char> named = proof.data();
  std::vector<unsigned char> covered(challenge.begin(), challenge.end());
  covered.insert(covered.end(), named.begin(), named.end());
  proof.bytes(mac(key, "initiator", hello.data(), covered));
  sendHandshakeFrame(sock, proof.data(), deadline, peer);

  const Bytes accept = recvHandshakeFrame(sock, deadline, peer);
  ByteReader a(accept, "agent handshake (accept)");
  InitiatorOutcome out;
  const uint32_t accepted = a.get<uint32_t>();
  out.outWindowMapped = (accepted & kAcceptWindowMapped) != 0;
  out.peerCopy = offer.offerPeerCopy && (accepted & kAcceptPeerCopy) != 0;
  out.ucx = offer.offerUcx && (accepted & kAcceptUcx) != 0;
  const std::string back = a.text(256);
  if (!back.empty() && offer.openBack) out.backWindowMapped = offer.openBack(back);
  ByteWriter ready;
  ready.put<uint32_t>(out.backWindowMapped ? 1 : 0);
  sendHandshakeFrame(sock, ready.data(), deadline, peer);
  return out;
}

TargetOutcome targetHandshake(const net::Socket& sock, const bootstrap::Secret& key, const TargetSide& side,
                              Deadline deadline, const std::string& from) {
  const Bytes hello = recvHandshakeFrame(sock, deadline, from);
  ByteReader h(hello, "agent handshake (hello)");
  if (h.get<uint32_t>() != kHelloMagic) throw PeerError(-1, "", concat(from, ": not a hetccl agent hello"));
  const uint32_t version = h.get<uint32_t>();
  TargetOutcome out;
  std::memcpy(out.peerIncarnation.data(), h.bytes(16).data(), 16);
  Incarnation expected{};
  std::memcpy(expected.data(), h.bytes(16).data(), 16);
  (void)h.bytes(16);  // nonce_i
  out.peerName = h.text(kMaxName);
  const uint32_t flags = h.get<uint32_t>();

  ByteWriter challenge;
  HelloStatus status = HelloStatus::Ok;
  if (version != kProtocolVersion) status = HelloStatus::BadVersion;
  else if (expected != side.self) status = HelloStatus::NotThisIncarnation;
  challenge.put<uint32_t>(static_cast<uint32_t>(status));
  challenge.bytes(side.self);
  challenge.bytes(nonce());
  const bootstrap::Mac m = mac(key, "target", hello, challenge.data());
  challenge.bytes(m);
  sendHandshakeFrame(sock, challenge.data(), deadline, from);
  if (status != HelloStatus::Ok)
    throw InvalidArgument(concat(from, " (agent '", out.peerName, "'): ",
                                 status == HelloStatus::BadVersion ? "another protocol version" : "stale metadata (an earlier incarnation of this agent)"));

  const Bytes proof = recvHandshakeFrame(sock, deadline, from);
  ByteReader pr(proof, "agent handshake (proof)");
  const std::string outWindow = pr.text(256);
  const size_t named = pr.offset();
  bootstrap::Mac got{};
  if (pr.left() != got.size()) throw PeerError(-1, "", concat(from, ": malformed handshake proof"));
  std::memcpy(got.data(), pr.bytes(got.size()).data(), got.size());
  std::vector<unsigned char> covered(challenge.data());
  covered.insert(covered.end(), proof.begin(), proof.begin() + static_cast<std::ptrdiff_t>(named));
  if (!bootstrap::macEqual(got, mac(key, "initiator", hello, covered)))
    throw PeerError(-1, "", concat(from, " (claims to be agent '", out.peerName, "') failed authentication: another secret"));
  if (!validName(out.peerName)) throw PeerError(-1, "", concat(from, ": invalid agent name in the hello"));

  // Authenticated: only now touch shared memory on the initiator's word.
  const bool wantWindows = (flags & kWantWindows) != 0;
  if (wantWindows && !outWindow.empty() && side.openOut) out.outWindowMapped = side.openOut(outWindow);
  const std::string back = wantWindows && side.createBack ? side.createBack() : std::string();
  out.peerCopy = (flags & kOfferPeerCopy) != 0 && side.acceptPeerCopy;
  out.ucx = (flags & kOfferUcx) != 0 && side.acceptUcx && side.acceptUcx();
  ByteWriter accept;
  accept.put<uint32_t>((out.outWindowMapped ? kAcceptWindowMapped : 0) | (out.peerCopy ? kAcceptPeerCopy : 0) |
                       (out.ucx ? kAcceptUcx : 0));
  accept.text(back);
  sendHandshakeFrame(sock, accept.data(), deadline, from);

  const Bytes ready = recvHandshakeFrame(sock, deadline, from);
  ByteReader r(ready, "agent handshake (ready)");
  out.backWindowMapped = r.get<uint32_t>() != 0;
  return out;
}

}  // namespace hetccl::agent
