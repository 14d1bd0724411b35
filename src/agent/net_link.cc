#include "agent/net_link.hpp"

#include <poll.h>

#include <cstring>

#include "agent/byte_codec.hpp"
#include "agent/handshake.hpp"
#include "agent/wire.hpp"
#include "bootstrap/crypto.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "transport/ucx/ucx_policy.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace hetccl::agent {
namespace {

/// Sender ranks a listener hands out: 1..kRanks-1 (the ucx transport's tags keep 20 bits of it; 0 is the
/// listener's own).
constexpr uint32_t kRanks = uint32_t{1} << 20;

}  // namespace

bool ucxAllowed(std::string* why) {
  const transport::UcxPolicy policy = transport::ucxPolicy();
  if (!policy.allowed) {
    *why = policy.whyNot;
    return false;
  }
  *why = transport::ucxUnavailableReason();
  if (!why->empty()) *why = "ucx unavailable: " + *why;
  return why->empty();
}

void NetPair::close() noexcept {
  if (send) send->abandon();
  if (recv) recv->abandon();
  send.reset();
  recv.reset();
}

NetLinks::~NetLinks() {
  listener_.reset();
  transport_.reset();
}

bool NetLinks::usable() {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return false;
  try {
    if (!transport_) transport_ = transport::makeUcxTransport();
    PeerInfo self;
    self.rank = 0;
    if (!listener_) listener_ = transport_->listen(self);
    return true;
  } catch (const Error& e) {
    failed_ = true;
    HETCCL_WARN(log::kNet, "agent '", agentName_, "': ucx unusable here (", e.what(), "): tcp carries the payload to agents of other hosts");
    return false;
  }
}

NetLinks::Expect NetLinks::expect() {
  if (!usable()) throw SystemError("ucx unusable here (see the warning above)");
  std::lock_guard<std::mutex> lock(mu_);
  Expect e;
  e.handle = listener_->handle();
  nextRank_ = nextRank_ % (kRanks - 1) + 1;
  e.rank = static_cast<int32_t>(nextRank_);
  bootstrap::randomBytes({reinterpret_cast<unsigned char*>(&e.token), sizeof e.token});
  return e;
}

NetPair NetLinks::initiate(const net::Socket& sock, Deadline d, const std::string& peer, const std::string& peerHost) {
  return link(sock, d, peer, peerHost, true);
}

NetPair NetLinks::answer(const net::Socket& sock, Deadline d, const std::string& peer, const std::string& peerHost) {
  return link(sock, d, peer, peerHost, false);
}

NetPair NetLinks::link(const net::Socket& sock, Deadline d, const std::string& peer, const std::string& peerHost,
                       bool initiator) {
  const Expect mine = expect();
  ByteWriter w;
  w.put<uint32_t>(kNetMagic);
  w.bytes(mine.handle.bytes);
  w.put<int32_t>(mine.rank);
  w.put<uint64_t>(mine.token);
  // The initiator speaks first: the socket stays one request, one answer.
  std::vector<unsigned char> frame;
  if (!initiator) frame = recvHandshakeFrame(sock, d, peer);
  sendHandshakeFrame(sock, w.data(), d, peer);
  if (initiator) frame = recvHandshakeFrame(sock, d, peer);
  ByteReader r(frame, "agent ucx set-up");
  if (r.get<uint32_t>() != kNetMagic) throw PeerError(-1, "", concat(peer, ": malformed ucx set-up"));
  Expect theirs;
  std::memcpy(theirs.handle.bytes.data(), r.bytes(theirs.handle.bytes.size()).data(), theirs.handle.bytes.size());
  theirs.rank = r.get<int32_t>();
  theirs.token = r.get<uint64_t>();
  if (r.left() != 0 || theirs.rank <= 0 || theirs.rank >= static_cast<int32_t>(kRanks))
    throw PeerError(-1, "", concat(peer, ": malformed ucx set-up"));

  transport::ConnectInfo out;  // this side -> the peer's listener
  out.self.rank = theirs.rank;
  out.peer.rank = 0;
  out.peer.hostId = peerHost;
  out.token = theirs.token;
  transport::ConnectInfo in;  // the peer -> this side's listener
  in.self.rank = 0;
  in.peer.rank = mine.rank;
  in.peer.hostId = peerHost;
  in.token = mine.token;
  // A peer that dies before it connected closes the socket: fail at once, not at the deadline. (The
  // initiator may already have sent its first request, done with its side: data there is not an end.)
  in.checkFailure = [&] {
    pollfd p{sock.fd(), POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
      throw PeerError(-1, "", concat(peer, ": the connection closed during the ucx set-up"));
  };
  NetPair pair;
  try {
    pair.send = transport_->connect(theirs.handle, out, d);
    pair.recv = transport_->accept(*listener_, in, d);
  } catch (const Error& e) {
    pair.close();
    throw PeerError(-1, "", concat(peer, ": ucx connection: ", e.what()));
  }
  HETCCL_INFO(log::kNet, "agent '", agentName_, "': payload with ", peer, " over ucx");
  return pair;
}

}  // namespace hetccl::agent
