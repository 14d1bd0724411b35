#include "bootstrap/root_session.hpp"

#include <algorithm>

#include "bootstrap/bootstrap.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr int kAnswerTimeoutMs = 5000;
constexpr int kMaxPlausibleRanks = 1 << 20;

std::string rankName(int rank, const std::string& host) {
  return host.empty() ? concat("rank ", rank) : concat("rank ", rank, " (host ", host, ")");
}

}  // namespace

void RootSession::add(AuthenticatedPeer peer) {
  auto m = std::make_unique<Member>();
  m->socket = std::move(peer.socket);
  m->handshakeRank = peer.rank;
  waiting_.push_back(std::move(m));
}

void RootSession::appendPollFds(std::vector<pollfd>& fds) const {
  for (const auto& m : waiting_) fds.push_back({m->socket.fd(), POLLIN, 0});
}

bool RootSession::complete() const {
  if (!error_.empty()) return answered_ >= std::max(largestNranks_, 1);
  return tableSent_;
}

std::string RootSession::progressText() const {
  if (!error_.empty()) return concat("error '", error_, "' delivered to ", answered_, " of ", largestNranks_, " ranks");
  return concat(registered_, " of ", nranks_, " ranks joined");
}

void RootSession::giveUp(const std::string& where, const std::string& note, const std::string& when) {
  if (complete() || !error_.empty() || nranks_ == 0) return;
  std::string missing, joined;  // a few of each: the message must stay far below the 4 KiB error limit
  int nMissing = 0, nJoined = 0, firstMissing = -1;
  for (int r = 0; r < nranks_; ++r) {
    if (byRank_[r] && nJoined++ < 8) joined += concat(nJoined > 1 ? ", " : "", rankName(r, byRank_[r]->info.hostId));
    if (!byRank_[r] && firstMissing < 0) firstMissing = r;
    if (!byRank_[r] && nMissing++ < 16) missing += concat(nMissing > 1 ? ", " : "", r);
  }
  if (nMissing > 16) missing += concat(" and ", nMissing - 16, " more");
  if (nJoined > 8) joined += concat(" and ", nJoined - 8, " more");
  fail(concat(nMissing == 1 ? "rank " : "ranks ", missing, " of ", nranks_, " did not join at ", where, " ", when,
              ": not started, or failed before joining; joined: ", joined,
              note.empty() ? "" : "; ", note),
       kErrorRankMissing | static_cast<uint32_t>(firstMissing));
}

void RootSession::service(const pollfd* fds) {
  size_t count = waiting_.size();  // members added after poll() are not in `fds`
  std::vector<Member*> ready;
  for (size_t i = 0; i < count; ++i)
    if (fds[i].revents) ready.push_back(waiting_[i].get());
  for (Member* m : ready) {
    if (!m->socket.valid()) continue;  // answered by a failure earlier in this loop
    std::string who = concat("rank ", m->handshakeRank);
    try {
      if (auto frame = m->reader.readFrom(m->socket, who)) {
        if (m->sentDescriptor) throw PeerError(m->handshakeRank, "", concat(who, " sent a second frame to the root"));
        m->sentDescriptor = true;
        onDescriptor(*m, *frame);
      }
    } catch (const Error& e) {
      HETCCL_INFO(log::kBootstrap, "bootstrap root: ", e.what());
      m->socket.close();
      if (m->registered) ++answered_;  // gone: it needs no answer (complete() must not wait for it)
      if (m->registered && error_.empty()) {
        const auto& d = *byRank_[m->handshakeRank];
        fail(concat(rankName(d.info.rank, d.info.hostId), " disconnected from the rendezvous root before every rank had joined"),
             kErrorRankFailed | static_cast<uint32_t>(d.info.rank));
      }
    }
  }
  std::erase_if(waiting_, [](const auto& m) { return !m->socket.valid(); });
  if (error_.empty() && nranks_ > 0 && registered_ == nranks_) sendTable();
}

const RankDescriptor* RootSession::reference() const {
  for (const auto& d : byRank_)
    if (d) return &*d;
  return nullptr;
}

std::string RootSession::check(const Member& m, const Frame& frame) {
  if (frame.type != FrameType::Descriptor)
    return concat("rank ", m.handshakeRank, " sent frame type ", int(frame.type), " instead of its descriptor");
  DescriptorPrefix prefix = readDescriptorPrefix(frame.payload.data(), frame.payload.size());
  if (prefix.nranks > 0 && prefix.nranks <= kMaxPlausibleRanks) largestNranks_ = std::max(largestNranks_, prefix.nranks);
  if (prefix.rank != m.handshakeRank) return concat("rank ", m.handshakeRank, " sent a descriptor for rank ", prefix.rank);
  const RankDescriptor* ref = reference();
  if (prefix.protocolVersion != kProtocolVersion) {
    if (ref) return concat("rank ", prefix.rank, " uses protocol version ", prefix.protocolVersion, ", rank ", ref->info.rank,
                           " uses ", ref->info.protocolVersion);
    return concat("rank ", prefix.rank, " uses protocol version ", prefix.protocolVersion, ", the rendezvous root uses ",
                  kProtocolVersion);
  }
  RankDescriptor d = decodeDescriptor(frame.payload.data(), frame.payload.size());
  std::string who = rankName(d.info.rank, d.info.hostId);
  if (d.nranks <= 0 || d.nranks > kMaxPlausibleRanks) return concat(who, " was started with nranks=", d.nranks);
  if (ref && d.nranks != nranks_)
    return concat(who, " was started with nranks=", d.nranks, ", rank ", ref->info.rank, " with nranks=", nranks_);
  int n = nranks_ ? nranks_ : d.nranks;
  if (d.info.rank < 0 || d.info.rank >= n) return concat(who, " is outside [0, ", n, ") for nranks=", n);
  if (!byRank_.empty() && byRank_[d.info.rank])
    return concat("rank ", d.info.rank, " joined twice (hosts ", byRank_[d.info.rank]->info.hostId, " and ", d.info.hostId, ")");
  return "";
}

void RootSession::onDescriptor(Member& m, const Frame& frame) {
  std::string problem;
  try {
    problem = check(m, frame);
  } catch (const InvalidArgument& e) {
    problem = concat("rank ", m.handshakeRank, " sent an invalid descriptor: ", e.what());
  }
  if (!error_.empty()) {  // the job has failed already: every late rank gets the same message
    answer(m, FrameType::Error, std::vector<unsigned char>(error_.begin(), error_.end()), errorTag_);
    return;
  }
  if (!problem.empty()) {
    fail(problem);
    return;
  }
  RankDescriptor d = decodeDescriptor(frame.payload.data(), frame.payload.size());
  if (nranks_ == 0) {
    nranks_ = d.nranks;
    byRank_.assign(nranks_, std::nullopt);
  }
  int rank = d.info.rank;
  byRank_[rank] = std::move(d);
  m.registered = true;
  ++registered_;
}

void RootSession::fail(const std::string& message, uint32_t tag) {
  error_ = message;
  errorTag_ = tag;
  HETCCL_WARN(log::kBootstrap, "bootstrap root: init failed: ", message);
  std::vector<unsigned char> payload(message.begin(), message.end());
  for (auto& m : waiting_)
    if (m->socket.valid() && m->sentDescriptor) answer(*m, FrameType::Error, payload, tag);
}

void RootSession::answer(Member& m, FrameType type, const std::vector<unsigned char>& payload, uint32_t tag) {
  try {
    sendFrame(m.socket, type, tag, payload, Deadline::afterMs(kAnswerTimeoutMs), concat("rank ", m.handshakeRank));
  } catch (const Error& e) {
    HETCCL_INFO(log::kBootstrap, "bootstrap root: could not answer: ", e.what());
  }
  m.socket.close();
  ++answered_;
}

void RootSession::sendTable() {
  std::vector<unsigned char> table;
  for (const auto& d : byRank_) {
    auto bytes = encodeDescriptor(*d);
    table.insert(table.end(), bytes.begin(), bytes.end());
  }
  for (auto& m : waiting_)
    if (m->socket.valid() && m->registered) answer(*m, FrameType::Table, table);
  tableSent_ = true;
  HETCCL_INFO(log::kBootstrap, "bootstrap root: all ", nranks_, " ranks joined; table sent");
}

}  // namespace hetccl::bootstrap
