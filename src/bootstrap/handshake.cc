#include "bootstrap/handshake.hpp"

#include <cstring>
#include <string_view>

#include "bootstrap/wire.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr uint32_t kHandshakeMagic = 0x53484348;  // bytes 'H','C','H','S'
constexpr uint16_t kHandshakeVersion = 1;
constexpr std::string_view kServerLabel = "hetccl bootstrap v1 server proof";
constexpr std::string_view kClientLabel = "hetccl bootstrap v1 client proof";
constexpr size_t kNonceOffset = 12;
constexpr size_t kServerMacOffset = 44;

void writeHello(unsigned char* p, Purpose purpose, int rank) {
  wire::putU32(p, kHandshakeMagic);
  wire::putU16(p + 4, kHandshakeVersion);
  wire::putU16(p + 6, static_cast<uint16_t>(purpose));
  wire::putI32(p + 8, rank);
  randomBytes(std::span(p + kNonceOffset, 32));
}

/// "" when the hello's magic, version and purpose are as expected.
std::string checkHello(const unsigned char* p, Purpose purpose) {
  if (wire::getU32(p) != kHandshakeMagic) return "not a hetccl bootstrap handshake";
  if (uint16_t v = wire::getU16(p + 4); v != kHandshakeVersion) return concat("handshake version ", v);
  if (wire::getU16(p + 6) != static_cast<uint16_t>(purpose)) return concat("handshake purpose ", wire::getU16(p + 6));
  return "";
}

Mac proof(const Secret& secret, std::string_view label, const unsigned char* clientHello,
          const unsigned char* serverHello) {
  return hmacSha256(secret, {std::span(reinterpret_cast<const unsigned char*>(label.data()), label.size()),
                             std::span(clientHello, kClientHelloBytes), std::span(serverHello, kServerMacOffset)});
}

/// Printable form of the first bytes a foreign program sent ("SSH-" or "\\x16\\x03...").
std::string printable(const unsigned char* p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      out += static_cast<char>(p[i]);
    } else {
      static const char* hex = "0123456789abcdef";
      out += concat("\\x", hex[p[i] >> 4], hex[p[i] & 15]);
    }
  }
  return out;
}

/// Reads the first 4 bytes of the server's hello into `reply` and checks the magic at once: a program
/// that is not hetccl (it holds the port) is named as such without waiting for 76 bytes that never come.
/// A server silent for kHandshakeTimeoutMs gets a warning (another program may hold the port, or the
/// server's process is stopped); the wait goes on until `deadline`, whose error says the same.
void awaitMagic(const net::Socket& s, unsigned char* reply, Deadline deadline, const std::string& peer) {
  try {
    try {
      s.recvAll(reply, 4, deadline.min(Deadline::afterMs(kHandshakeTimeoutMs)), peer);
    } catch (const TimeoutError&) {
      if (deadline.expired()) throw;
      HETCCL_WARN(log::kBootstrap, peer, " accepted the connection but has not answered the hetccl handshake for ",
                  kHandshakeTimeoutMs / 1000, " s: another program may hold that port, or its process is stopped");
      s.recvAll(reply, 4, deadline, peer);
    }
  } catch (const TimeoutError& e) {
    throw TimeoutError(e.peer(), e.host(),
                       concat(peer, " accepted the connection but never answered the hetccl bootstrap handshake before ",
                              "the deadline: another program may hold that port, or its process is stopped or hung"));
  }
  if (wire::getU32(reply) != kHandshakeMagic)
    throw InvalidUsage(concat(peer, " is not a hetccl bootstrap endpoint: the program listening there answered with '",
                              printable(reply, 4), "...' (another program holds that address and port?)"));
}

}  // namespace

void authenticateAsClient(const net::Socket& s, const Secret& secret, Purpose purpose, int myRank, int serverRank,
                          Deadline deadline, const std::string& peer) {
  unsigned char hello[kClientHelloBytes];
  writeHello(hello, purpose, myRank);
  s.sendAll(hello, sizeof hello, deadline, peer);
  unsigned char reply[kServerHelloBytes];
  awaitMagic(s, reply, deadline, peer);
  s.recvAll(reply + 4, sizeof reply - 4, deadline, peer);
  if (std::string err = checkHello(reply, purpose); !err.empty())
    throw PeerError(-1, "", concat(peer, " answered the bootstrap handshake wrongly: ", err));
  Mac got;
  std::memcpy(got.data(), reply + kServerMacOffset, got.size());
  const Mac mine = proof(secret, kClientLabel, hello, reply);
  if (!macEqual(got, proof(secret, kServerLabel, hello, reply))) {
    // Our proof goes anyway (best effort): the server then sees a client that claimed this rank fail on its
    // proof, most likely this rank started with another secret, and can tell the job's other ranks at once
    // (HETCCL_AUTH_FAILURE_GRACE) instead of at their deadline. An HMAC of two public hellos under a key of
    // >= 128 bits tells a server that is not ours nothing it can use (docs/SECURITY.md).
    try {
      s.sendAll(mine.data(), mine.size(), deadline.min(Deadline::afterMs(kHandshakeTimeoutMs)), peer);
    } catch (const Error&) {
    }
    throw InvalidArgument(concat(peer, " failed authentication: it does not hold this job's secret (different unique id?)"));
  }
  if (int r = wire::getI32(reply + 8); r != serverRank)
    throw PeerError(-1, "", concat(peer, " is rank ", r, ", expected rank ", serverRank));
  s.sendAll(mine.data(), mine.size(), deadline, peer);
}

ServerHandshake::ServerHandshake(net::Socket s, const Secret& secret, Purpose purpose, int serverRank,
                                 RankCheck rankAllowed, Deadline deadline)
    : socket_(std::move(s)),
      secret_(secret),
      purpose_(purpose),
      serverRank_(serverRank),
      rankAllowed_(std::move(rankAllowed)),
      deadline_(deadline) {
  try {
    describe_ = concat("client ", socket_.peerAddress().toString());
  } catch (const Error&) {
    describe_ = "client (address unknown)";
  }
}

ServerHandshake::Status ServerHandshake::fail(std::string why) {
  state_ = State::Failed;
  reason_ = std::move(why);
  return Status::Failed;
}

bool ServerHandshake::readInto(size_t want) {
  have_ += socket_.recvSome(in_ + have_, want - have_, describe_);
  return have_ == want;
}

ServerHandshake::Status ServerHandshake::onHello() {
  std::memcpy(clientHello_, in_, kClientHelloBytes);
  if (std::string err = checkHello(clientHello_, purpose_); !err.empty()) return fail(err);
  clientRank_ = wire::getI32(clientHello_ + 8);
  if (!rankAllowed_(clientRank_)) return fail(concat("client claims rank ", clientRank_, ", which is not expected here"));
  writeHello(serverHello_, purpose_, serverRank_);
  Mac mac = proof(secret_, kServerLabel, clientHello_, serverHello_);
  std::memcpy(serverHello_ + kServerMacOffset, mac.data(), mac.size());
  state_ = State::WriteServerHello;
  return Status::InProgress;
}

ServerHandshake::Status ServerHandshake::onProof() {
  Mac got;
  std::memcpy(got.data(), in_, got.size());
  if (!macEqual(got, proof(secret_, kClientLabel, clientHello_, serverHello_))) {
    wrongProof_ = true;
    return fail("wrong proof (client does not hold this job's secret)");
  }
  state_ = State::Done;
  return Status::Done;
}

ServerHandshake::Status ServerHandshake::progress() {
  try {
    while (true) {
      switch (state_) {
        case State::ReadHello:
          if (!readInto(kClientHelloBytes)) return Status::InProgress;
          if (onHello() == Status::Failed) return Status::Failed;
          break;
        case State::WriteServerHello:
          sent_ += socket_.sendSome(serverHello_ + sent_, kServerHelloBytes - sent_, describe_);
          if (sent_ < kServerHelloBytes) return Status::InProgress;
          state_ = State::ReadProof;
          have_ = 0;
          break;
        case State::ReadProof:
          if (!readInto(kProofBytes)) return Status::InProgress;
          return onProof();
        case State::Done: return Status::Done;
        case State::Failed: return Status::Failed;
      }
    }
  } catch (const Error& e) {
    return fail(e.what());
  }
}

}  // namespace hetccl::bootstrap
