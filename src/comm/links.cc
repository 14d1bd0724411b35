#include "comm/links.hpp"

#include <openssl/rand.h>

#include <cstring>

#include "core/log.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport/tcp/tcp_transport.hpp"

namespace hetccl {
namespace {

enum TransportId { kShm = 0, kTcp = 1, kNumTransports = 2 };

// Token of the connection from -> to: both ends derive it from the nonces every rank published through
// the authenticated bootstrap, so a stranger on the network cannot present it.
uint64_t connectionToken(uint64_t nonceFrom, uint64_t nonceTo, int from, int to) {
  uint64_t x = nonceFrom ^ (nonceTo * 0x9e3779b97f4a7c15ULL) ^ (static_cast<uint64_t>(from) << 32 | static_cast<uint32_t>(to));
  x ^= x >> 30;  // splitmix64 finaliser
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

int chooseTransport(const std::string& forced, const PeerInfo& self, const PeerInfo& peer) {
  if (forced == "tcp") return kTcp;
  if (forced == "shm") {
    if (self.hostId != peer.hostId)
      throw InvalidUsage(concat("HETCCL_TRANSPORT=shm but rank ", peer.rank, " is on host ", peer.hostId,
                                " and rank ", self.rank, " on host ", self.hostId));
    return kShm;
  }
  if (!forced.empty() && forced != "auto")
    throw InvalidArgument(concat("unknown transport '", forced, "' (expected auto, shm or tcp)"));
  return self.hostId == peer.hostId ? kShm : kTcp;
}

// What every rank publishes: a random nonce, its transport setting (compared: ranks that disagree would
// otherwise meet as "not a valid shm handle") and one listener handle per transport.
struct Published {
  uint64_t nonce;
  char transport[16];  ///< HETCCL_TRANSPORT / netName as this rank sees it, NUL-terminated
  transport::Handle handles[kNumTransports];
};

std::string settingOf(const Published& p) { return std::string(p.transport, strnlen(p.transport, sizeof p.transport)); }

/// Throws InvalidUsage, on every rank alike, when two ranks would pick different transports for the link
/// between them because they were given different settings (e.g. shm on one, tcp on the other).
void checkSameTransport(const std::vector<Published>& table, const std::vector<PeerInfo>& peers) {
  const int n = static_cast<int>(table.size());
  for (int p = 0; p < n; ++p)
    for (int q = p + 1; q < n; ++q) {
      const std::string a = settingOf(table[p]), b = settingOf(table[q]);
      if (a == b) continue;
      int fromP = -1, fromQ = -1;
      try {
        fromP = chooseTransport(a == "auto" ? "" : a, peers[p], peers[q]);
        fromQ = chooseTransport(b == "auto" ? "" : b, peers[q], peers[p]);
      } catch (const Error&) {
      }
      if (fromP != fromQ)
        throw InvalidUsage(concat("ranks disagree on the transport: rank ", p, " has HETCCL_TRANSPORT (or the config's "
                                  "netName) '", a, "', rank ", q, " has '", b, "'; set it alike on every rank"));
    }
}

}  // namespace

LinkSet::LinkSet(bootstrap::Bootstrap& boot, const std::string& forced, const std::atomic<bool>* abortFlag,
                 Deadline deadline)
    : rank_(boot.rank()) {
  const int n = boot.size();
  const auto& peers = boot.peers();
  const PeerInfo& self = peers[rank_];
  choice_.assign(n, -1);
  bool needed[kNumTransports] = {};
  for (int p = 0; p < n; ++p) {
    if (p == rank_) continue;
    choice_[p] = chooseTransport(forced, self, peers[p]);
    needed[choice_[p]] = true;
  }

  transports_.push_back(transport::makeShmTransport());
  transports_.push_back(transport::makeTcpTransport());
  std::vector<std::unique_ptr<transport::Listener>> listeners(kNumTransports);
  std::vector<Published> table(n);
  Published& mine = table[rank_];
  std::memset(static_cast<void*>(&mine), 0, sizeof mine);  // every byte goes on the wire
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&mine.nonce), sizeof mine.nonce) != 1)
    throw SystemError("RAND_bytes failed while creating connection tokens");
  std::strncpy(mine.transport, (forced.empty() ? std::string("auto") : forced).c_str(), sizeof mine.transport - 1);
  // Every rank listens on a transport when any of its peers will use it; peers agree because the
  // choice is symmetric in (self, peer).
  for (int t = 0; t < kNumTransports; ++t) {
    if (!needed[t]) continue;
    listeners[t] = transports_[t]->listen(self);
    mine.handles[t] = listeners[t]->handle();
  }
  boot.allGather(table.data(), sizeof(Published));
  checkSameTransport(table, peers);

  send_.resize(n);
  recv_.resize(n);
  // All connects first (they never wait for the peer), then all accepts.
  for (int p = 0; p < n; ++p) {
    if (p == rank_) continue;
    transport::ConnectInfo info{self, peers[p], connectionToken(mine.nonce, table[p].nonce, rank_, p), abortFlag};
    send_[p] = transports_[choice_[p]]->connect(table[p].handles[choice_[p]], info, deadline);
  }
  for (int p = 0; p < n; ++p) {
    if (p == rank_) continue;
    transport::ConnectInfo info{self, peers[p], connectionToken(table[p].nonce, mine.nonce, p, rank_), abortFlag};
    recv_[p] = transports_[choice_[p]]->accept(*listeners[choice_[p]], info, deadline);
    HETCCL_INFO(log::kInit, "rank ", rank_, " <-> rank ", p, " (host ", peers[p].hostId, ", domain ",
                peers[p].domain, ") via ", transports_[choice_[p]]->name());
  }
}

LinkSet::~LinkSet() = default;

transport::SendConn& LinkSet::sendTo(int peer) {
  if (peer < 0 || peer >= static_cast<int>(send_.size()) || !send_[peer])
    throw InternalError(concat("no send connection from rank ", rank_, " to rank ", peer));
  return *send_[peer];
}

transport::RecvConn& LinkSet::recvFrom(int peer) {
  if (peer < 0 || peer >= static_cast<int>(recv_.size()) || !recv_[peer])
    throw InternalError(concat("no receive connection at rank ", rank_, " from rank ", peer));
  return *recv_[peer];
}

std::string_view LinkSet::transportTo(int peer) const {
  if (peer == rank_ || peer < 0 || peer >= static_cast<int>(choice_.size())) return "self";
  return transports_[choice_[peer]]->name();
}

}  // namespace hetccl
