#include "transport/links/link_set.hpp"

#include <cstring>

#include "bootstrap/crypto.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/ucx/ucx_policy.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace hetccl::transport {
namespace {

enum TransportId { kShm = 0, kTcp = 1, kUcx = 2, kNumTransports = 3 };

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

// What a rank says about the ucx transport (Published::ucx): usable here, and whether HETCCL_UCX lets
// auto pick it / insists on it.
constexpr uint8_t kUcxUsable = 1;    ///< libucp loaded and a UCP context was created in this process
constexpr uint8_t kUcxAllowed = 2;   ///< HETCCL_UCX=on, or auto on a host with an RDMA device
constexpr uint8_t kUcxRequired = 4;  ///< HETCCL_UCX=on
constexpr uint8_t kRdmaDevice = 8;   ///< this host lists an RDMA device (net/rdma_devices.hpp)

/// The transport of the link self -> peer. Symmetric in (self, peer) when both have the same setting,
/// because it only looks at what both published (host ids, ucx flags): both ends of a link agree.
int chooseTransport(const std::string& forced, const PeerInfo& self, const PeerInfo& peer, uint8_t ucxSelf = 0,
                    uint8_t ucxPeer = 0) {
  if (forced == "tcp") return kTcp;
  if (forced == "ucx") return kUcx;
  if (forced == "shm") {
    if (self.hostId != peer.hostId)
      throw InvalidUsage(concat("HETCCL_TRANSPORT=shm but rank ", peer.rank, " is on host ", peer.hostId,
                                " and rank ", self.rank, " on host ", self.hostId));
    return kShm;
  }
  if (!forced.empty() && forced != "auto")
    throw InvalidArgument(concat("unknown transport '", forced, "' (expected auto, shm, tcp or ucx)"));
  if (self.hostId == peer.hostId) return kShm;
  const uint8_t both = ucxSelf & ucxPeer;
  return (both & kUcxUsable) && (both & kUcxAllowed) ? kUcx : kTcp;
}

// What every rank publishes: a random nonce, its transport setting (compared: ranks that disagree would
// otherwise meet as "not a valid shm handle"), what it can do with ucx, and one listener handle per
// transport.
struct Published {
  uint64_t nonce;
  char transport[16];  ///< HETCCL_TRANSPORT / netName as this rank sees it, NUL-terminated
  uint8_t ucx;         ///< kUcx* flags
  uint8_t reserved[7];
  transport::Handle handles[kNumTransports];
};

std::string settingOf(const Published& p) { return std::string(p.transport, strnlen(p.transport, sizeof p.transport)); }

/// Throws InvalidUsage, on every rank alike, when two ranks would pick different transports for the link
/// between them because they were given different settings (e.g. shm on one, tcp on the other), or when
/// a link is to use ucx and one of its ranks has no usable UCX (HETCCL_TRANSPORT=ucx, HETCCL_UCX=on).
void checkSameTransport(const std::vector<Published>& table, const std::vector<PeerInfo>& peers) {
  const int n = static_cast<int>(table.size());
  for (int p = 0; p < n; ++p) {
    if ((table[p].ucx & kUcxRequired) && !(table[p].ucx & kUcxUsable))
      throw InvalidUsage(concat("HETCCL_UCX=on but the ucx transport is unavailable on rank ", p, " (host ",
                                peers[p].hostId, "): libucp did not load or UCX failed there (its log says why at INFO)"));
    for (int q = p + 1; q < n; ++q) {
      const std::string a = settingOf(table[p]), b = settingOf(table[q]);
      int fromP = -1, fromQ = -1;
      try {
        fromP = chooseTransport(a == "auto" ? "" : a, peers[p], peers[q], table[p].ucx, table[q].ucx);
        fromQ = chooseTransport(b == "auto" ? "" : b, peers[q], peers[p], table[q].ucx, table[p].ucx);
      } catch (const Error&) {
      }
      if (fromP != fromQ)
        throw InvalidUsage(concat("ranks disagree on the transport: rank ", p, " has HETCCL_TRANSPORT (or the config's "
                                  "netName) '", a, "', rank ", q, " has '", b, "'; set it alike on every rank"));
      if (fromP == kUcx && !((table[p].ucx & table[q].ucx) & kUcxUsable)) {
        const int lacking = (table[p].ucx & kUcxUsable) ? q : p;
        throw InvalidUsage(concat("HETCCL_TRANSPORT=ucx but the ucx transport is unavailable on rank ", lacking, " (host ",
                                  peers[lacking].hostId, "): libucp did not load or UCX failed there (its log says why "
                                  "at INFO); use tcp"));
      }
      const bool remote = peers[p].hostId != peers[q].hostId;
      if (fromP == kTcp && remote && a == "auto" && ((table[p].ucx | table[q].ucx) & kUcxRequired)) {
        const int other = (table[p].ucx & kUcxRequired) ? q : p;
        throw InvalidUsage(concat("HETCCL_UCX=on but ranks ", p, " and ", q, " cannot both use ucx (rank ", other, " has ",
                                  !(table[other].ucx & kUcxAllowed) ? "HETCCL_UCX=off, or auto on a host without an RDMA device"
                                                                     : "no usable UCX", ")"));
      }
    }
  }
}

/// This rank's kUcx* flags: whether UCX is usable here (tried only when some link might use it) and
/// what HETCCL_UCX says. HETCCL_UCX=on is about links between hosts: a communicator without any (e.g. a
/// split into one host's ranks, or one rank) requires nothing. Under auto, a host without an RDMA device
/// does not allow ucx (UCX would run over tcp, slower than the tcp transport) and does not load it.
uint8_t ucxFlags(const std::string& forced, bool remotePeer) {
  const transport::UcxPolicy policy = transport::ucxPolicy();
  uint8_t flags = 0;
  if (remotePeer && policy.rdmaDevice) flags |= kRdmaDevice;
  if (policy.mode == transport::UcxMode::On || (remotePeer && policy.allowed)) flags |= kUcxAllowed;
  if (policy.mode == transport::UcxMode::On && remotePeer) flags |= kUcxRequired;
  const bool wanted = forced == "ucx" || ((forced.empty() || forced == "auto") && remotePeer && (flags & kUcxAllowed));
  if (wanted && transport::ucxUnavailableReason().empty()) flags |= kUcxUsable;
  return flags;
}

/// Why some link of `self` to another host is not ucx under auto ("; ..."), or "" when all are.
std::string whyNotUcx(const std::vector<Published>& table, const std::vector<PeerInfo>& peers, int self) {
  const uint8_t mine = table[self].ucx;
  if (!(mine & kUcxAllowed)) {
    const transport::UcxPolicy policy = transport::ucxPolicy();
    return policy.mode == transport::UcxMode::Off ? "" : "; " + policy.whyNot;
  }
  if (!(mine & kUcxUsable)) return concat("; ucx unavailable here: ", transport::ucxUnavailableReason());
  for (size_t p = 0; p < table.size(); ++p) {
    if (static_cast<int>(p) == self || peers[p].hostId == peers[self].hostId) continue;
    if (!(table[p].ucx & kUcxAllowed) && (table[p].ucx & kUcxRequired) == 0)
      return concat("; rank ", p, " (host ", peers[p].hostId, ") ",
                    (table[p].ucx & kRdmaDevice) ? "has HETCCL_UCX=off" : "has no RDMA device", ": tcp to it");
    if (!(table[p].ucx & kUcxUsable)) return concat("; rank ", p, " (host ", peers[p].hostId, ") has no usable UCX: tcp to it");
  }
  return "";
}

}  // namespace

LinkSet::LinkSet(bootstrap::Bootstrap& boot, const std::string& forced, const std::atomic<bool>* abortFlag,
                 Deadline deadline, LinkScope scope)
    : rank_(boot.rank()) {
  const int n = boot.size();
  const auto& peers = boot.peers();
  const PeerInfo& self = peers[rank_];
  choice_.assign(n, -1);
  // Peers this set connects to (symmetric: p links to q exactly when q links to p).
  auto linked = [&](int p) { return p != rank_ && (scope == LinkScope::AllPeers || peers[p].hostId != self.hostId); };
  // Which transports this rank may need before it knows the others' ucx flags: auto may use ucx or tcp
  // towards every other host, so it listens on both (an unused listener closes at the end of init).
  bool mayNeed[kNumTransports] = {};
  bool remotePeer = false;
  for (int p = 0; p < n; ++p) {
    if (!linked(p)) continue;
    remotePeer = remotePeer || peers[p].hostId != self.hostId;
    const int c = chooseTransport(forced, self, peers[p], kUcxUsable | kUcxAllowed, kUcxUsable | kUcxAllowed);
    mayNeed[c] = true;
    if (c == kUcx && forced != "ucx") mayNeed[kTcp] = true;
  }

  std::vector<Published> table(n);
  Published& mine = table[rank_];
  std::memset(static_cast<void*>(&mine), 0, sizeof mine);  // every byte goes on the wire
  mine.ucx = ucxFlags(forced, remotePeer);
  if (!(mine.ucx & kUcxUsable)) mayNeed[kUcx] = false;  // every rank learns it from the table and falls back

  transports_.push_back(transport::makeShmTransport());
  transports_.push_back(transport::makeTcpTransport());
  transports_.push_back(mine.ucx & kUcxUsable ? transport::makeUcxTransport() : nullptr);
  std::vector<std::unique_ptr<transport::Listener>> listeners(kNumTransports);
  bootstrap::randomBytes(std::span(reinterpret_cast<unsigned char*>(&mine.nonce), sizeof mine.nonce));
  std::strncpy(mine.transport, (forced.empty() ? std::string("auto") : forced).c_str(), sizeof mine.transport - 1);
  // Every rank listens on a transport when any of its peers may use it.
  for (int t = 0; t < kNumTransports; ++t) {
    if (!mayNeed[t] || !transports_[t]) continue;
    listeners[t] = transports_[t]->listen(self);
    mine.handles[t] = listeners[t]->handle();
  }
  boot.allGather(table.data(), sizeof(Published));
  checkSameTransport(table, peers);
  bool usesUcx = false;
  for (int p = 0; p < n; ++p) {
    if (!linked(p)) continue;
    choice_[p] = chooseTransport(forced, self, peers[p], mine.ucx, table[p].ucx);
    usesUcx = usesUcx || choice_[p] == kUcx;
  }
  if (remotePeer && (forced.empty() || forced == "auto"))
    HETCCL_INFO(log::kInit, "rank ", rank_, ": links to other hosts: ", usesUcx ? "ucx" : "tcp", " (HETCCL_UCX=",
                config().str("HETCCL_UCX"), whyNotUcx(table, peers, rank_), ")");

  send_.resize(n);
  recv_.resize(n);
  try {
    // All connects first (they never wait for the peer), then all accepts.
    for (int p = 0; p < n; ++p) {
      if (!linked(p)) continue;
      transport::ConnectInfo info{self, peers[p], connectionToken(mine.nonce, table[p].nonce, rank_, p), abortFlag};
      send_[p] = transports_[choice_[p]]->connect(table[p].handles[choice_[p]], info, deadline);
    }
    for (int p = 0; p < n; ++p) {
      if (!linked(p)) continue;
      transport::ConnectInfo info{self, peers[p], connectionToken(table[p].nonce, mine.nonce, p, rank_), abortFlag};
      recv_[p] = transports_[choice_[p]]->accept(*listeners[choice_[p]], info, deadline);
      HETCCL_INFO(log::kInit, "rank ", rank_, " <-> rank ", p, " (host ", peers[p].hostId, ", domain ",
                  peers[p].domain, ") via ", transports_[choice_[p]]->name());
    }
  } catch (...) {  // a peer that never connected may be stopped: the others' connections go without waiting
    abandonAll();
    throw;
  }
}

LinkSet::~LinkSet() {
  if (abrupt_) abandonAll();
}

void LinkSet::abandonAll() noexcept {
  for (auto& s : send_)
    if (s) s->abandon();
  for (auto& r : recv_)
    if (r) r->abandon();
}

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
  if (choice_[peer] < 0) return "none";
  return transports_[choice_[peer]]->name();
}

}  // namespace hetccl::transport
