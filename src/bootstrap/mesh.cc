#include "bootstrap/mesh.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "bootstrap/deadline_blame.hpp"
#include "bootstrap/wire.hpp"
#include "core/config.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {
constexpr size_t kSubheaderBytes = 8;  // u32 comm | u32 zero
}

Mesh::Mesh(int rank, std::vector<PeerInfo> peers, std::vector<net::Socket> sockets)
    : rank_(rank), peers_(std::move(peers)), sockets_(std::move(sockets)), failures_(peers_.size()),
      departures_(peers_.size()) {
  readers_.resize(sockets_.size());
  for (size_t i = 0; i < sockets_.size(); ++i) sendLocks_.push_back(std::make_unique<std::mutex>());
  pendingOut_.resize(sockets_.size());
  lastHeard_.assign(sockets_.size(), Clock::now());
  nextHeartbeat_ = Clock::now();
  silenceMs_ = config().timeoutMs();
  heartbeatMs_ = static_cast<int>(std::clamp<int64_t>(silenceMs_ / 20, 20, 500));
  for (auto& s : sockets_)
    if (s.valid()) s.setKeepalive(silenceMs_);  // the kernel, too, gives up on a vanished host
  wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd_ < 0) throw SystemError::fromErrno("eventfd", errno);
  reader_ = std::thread([this] { readLoop(); });
}

Mesh::~Mesh() {
  noticeOnAbnormalExit();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  uint64_t one = 1;
  (void)!::write(wakeFd_, &one, sizeof one);
  reader_.join();
  ::close(wakeFd_);
  for (auto& s : sockets_) s.close();
}

std::string Mesh::name(int peer) const {
  const std::string& host = peers_[peer].hostId;
  return host.empty() ? concat("rank ", peer) : concat("rank ", peer, " (host ", host, ")");
}

void Mesh::recordFailure(int peer, const std::string& what) {
  size_t left = 0;
  {
    std::lock_guard lock(mutex_);
    if (failures_[peer] || stopping_) return;
    failures_[peer] = Failure{failureCount_++, PeerError(peer, peers_[peer].hostId, what)};
    left = departures_[peer].size();
  }
  if (left == 0)
    HETCCL_INFO(log::kBootstrap, "bootstrap rank ", rank_, ": ", what);
  else  // the usual end of a job: the peer finalized, said goodbye, then closed
    HETCCL_TRACE(log::kBootstrap, "bootstrap rank ", rank_, ": ", what, " (after goodbye on ", left, " comm(s))");
  changed_.notify_all();
}

void Mesh::recordGoodbye(int peer, uint32_t comm) {
  {
    std::lock_guard lock(mutex_);
    departures_[peer].insert(comm);
  }
  HETCCL_TRACE(log::kBootstrap, "bootstrap rank ", rank_, ": ", name(peer), " said goodbye on comm ", comm);
  changed_.notify_all();
}

void Mesh::readFrom(int peer) {
  const net::Socket& s = sockets_[peer];
  try {
    while (auto frame = readers_[peer].readFrom(s, name(peer))) {
      if (frame->type == FrameType::Heartbeat) {
        if (!frame->payload.empty() || frame->tag != 0) throw PeerError(peer, "", "malformed heartbeat");
        continue;  // arriving at all was the point
      }
      if (frame->type != FrameType::Data && frame->type != FrameType::Collective && frame->type != FrameType::Goodbye &&
          frame->type != FrameType::Notice)
        throw PeerError(peer, "", concat("unexpected frame type ", int(frame->type)));
      if (frame->payload.size() < kSubheaderBytes || wire::getU32(frame->payload.data() + 4) != 0)
        throw PeerError(peer, "", "malformed message header");
      uint32_t comm = wire::getU32(frame->payload.data());
      if (frame->type == FrameType::Notice) {
        recordNotice(peer, frame->payload);
        continue;
      }
      if (frame->type == FrameType::Goodbye) {
        if (frame->payload.size() != kSubheaderBytes || frame->tag != 0)
          throw PeerError(peer, "", "malformed goodbye");
        recordGoodbye(peer, comm);
        continue;
      }
      frame->payload.erase(frame->payload.begin(), frame->payload.begin() + kSubheaderBytes);
      {
        std::lock_guard lock(mutex_);
        queues_[Key{peer, frame->type, comm, frame->tag}].push_back(std::move(frame->payload));
      }
      changed_.notify_all();
    }
  } catch (const PeerError& e) {
    std::string text = e.what();
    // A process that exits with bytes unread (our heartbeats, at least) resets its connections instead of
    // closing them: both mean it went away.
    if (text.ends_with("connection closed") || text.ends_with(std::strerror(ECONNRESET)))
      recordFailure(peer, concat(name(peer), " closed its bootstrap connection: process died?"));
    else
      recordFailure(peer, concat(name(peer), " broke its bootstrap connection: ", text));
  } catch (const Error& e) {
    recordFailure(peer, concat(name(peer), " broke its bootstrap connection: ", e.what()));
  }
}

void Mesh::recordNotice(int from, const std::vector<unsigned char>& payload) {
  if (payload.size() < kSubheaderBytes + 4 || payload.size() > kSubheaderBytes + 4 + kMaxNoticeReason)
    throw PeerError(from, "", "malformed failure notice");
  int blamed = wire::getI32(payload.data() + kSubheaderBytes);
  if (blamed < 0 || blamed >= static_cast<int>(peers_.size()) || blamed == from)
    throw PeerError(from, "", concat("failure notice about rank ", blamed));
  if (blamed == rank_) return;  // this rank knows it is alive; the sender's own failure shows when it leaves
  std::string reason(payload.begin() + kSubheaderBytes + 4, payload.end());
  for (char& c : reason)
    if (c < 0x20 || c > 0x7e) c = '?';
  recordFailure(blamed, concat(name(from), " reports: ", reason));
}

void Mesh::readLoop() noexcept {
  std::vector<pollfd> fds;
  std::vector<int> owners;
  int sleepMs = 0;
  while (true) {
    fds.assign(1, pollfd{wakeFd_, POLLIN, 0});
    owners.assign(1, -1);
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      for (size_t p = 0; p < sockets_.size(); ++p)
        if (sockets_[p].valid() && !failures_[p]) {
          fds.push_back({sockets_[p].fd(), POLLIN, 0});
          owners.push_back(static_cast<int>(p));
        }
    }
    int rc = ::poll(fds.data(), fds.size(), sleepMs);
    if (rc < 0 && errno != EINTR) {
      HETCCL_WARN(log::kBootstrap, "bootstrap rank ", rank_, ": poll failed: ", std::strerror(errno));
      return;
    }
    if (rc > 0) {
      if (fds[0].revents) return;
      const auto now = Clock::now();
      for (size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents) {
          {
            std::lock_guard lock(mutex_);  // recv() reads it to name a silent rank at its deadline
            lastHeard_[owners[i]] = now;   // data, a heartbeat or the end: the peer (or its kernel) answered
          }
          readFrom(owners[i]);
        }
    }
    sleepMs = livenessTick();
  }
}

int64_t Mesh::silenceMsLocked(int peer) const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - lastHeard_[peer]).count();
}

std::optional<std::pair<int, int64_t>> Mesh::silentMemberLocked(const std::vector<int>& members, uint32_t comm,
                                                                 int awaited) const {
  std::vector<MemberSilence> others;
  for (int m : members)
    if (m != rank_ && m != awaited && sockets_[m].valid() && !departures_[m].contains(comm))
      others.push_back({m, silenceMsLocked(m)});
  const auto blamed = blameInstead(silenceMsLocked(awaited), others, 3 * int64_t(heartbeatMs_));
  if (!blamed) return std::nullopt;
  return std::make_pair(blamed->rank, blamed->silentMs);
}

std::optional<PeerError> Mesh::failureLocked(const std::vector<int>& members, uint32_t comm) const {
  const Failure* first = nullptr;
  for (int m : members)
    if (failures_[m] && !departures_[m].contains(comm) && (!first || failures_[m]->order < first->order))
      first = &*failures_[m];
  if (!first) return std::nullopt;
  return first->error;
}

std::optional<PeerError> Mesh::failure(const std::vector<int>& members, uint32_t comm) const {
  std::lock_guard lock(mutex_);
  return failureLocked(members, comm);
}

void Mesh::abort() {
  {
    std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

void Mesh::send(int peer, FrameType type, uint32_t comm, uint32_t tag, const void* data, size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    if (aborted_) throw AbortedError(concat("bootstrap rank ", rank_, ": aborted while sending to ", name(peer)));
    if (failures_[peer]) throw failures_[peer]->error;
  }
  if (bytes > kMaxFramePayload - kSubheaderBytes)
    throw InvalidArgument(concat("bootstrap message of ", bytes, " bytes to ", name(peer), " exceeds the limit"));
  std::vector<unsigned char> payload(kSubheaderBytes + bytes);
  wire::putU32(payload.data(), comm);
  if (bytes) std::memcpy(payload.data() + kSubheaderBytes, data, bytes);
  std::vector<unsigned char> frame = encodeFrame(type, tag, payload.data(), payload.size());
  std::lock_guard sendLock(*sendLocks_[peer]);
  try {
    sendLocked(peer, frame, Deadline::fromConfig());
  } catch (const TimeoutError& e) {
    throw TimeoutError(peer, peers_[peer].hostId, concat("bootstrap rank ", rank_, ": ", e.what()));
  } catch (const Error& e) {
    recordFailure(peer, concat(name(peer), " broke its bootstrap connection: ", e.what()));
    throw PeerError(peer, peers_[peer].hostId, concat("bootstrap rank ", rank_, ": ", e.what()));
  }
}

void Mesh::goodbye(uint32_t comm, const std::vector<int>& members) {
  std::vector<unsigned char> payload(kSubheaderBytes, 0);
  wire::putU32(payload.data(), comm);
  const std::vector<unsigned char> frame = encodeFrame(FrameType::Goodbye, 0, payload.data(), payload.size());
  if (comm == 0) {
    std::lock_guard lock(mutex_);
    leftWorld_ = true;
  }
  for (int peer : members) {
    if (peer == rank_) continue;
    {
      std::lock_guard lock(mutex_);
      if (failures_[peer]) continue;  // already gone: nobody to tell
    }
    std::lock_guard sendLock(*sendLocks_[peer]);
    try {
      sendLocked(peer, frame, Deadline::fromConfig());
    } catch (const Error& e) {  // it left or died meanwhile; its reader side reports what it did
      HETCCL_TRACE(log::kBootstrap, "bootstrap rank ", rank_, ": goodbye to ", name(peer), " not sent: ", e.what());
    }
  }
}

void Mesh::recv(int peer, FrameType type, uint32_t comm, uint32_t tag, void* data, size_t bytes, Deadline deadline,
                const std::vector<int>& members) {
  std::unique_lock lock(mutex_);
  Key key{peer, type, comm, tag};
  while (true) {
    if (aborted_) throw AbortedError(concat("bootstrap rank ", rank_, ": aborted while waiting for ", name(peer)));
    auto it = queues_.find(key);
    if (it != queues_.end() && !it->second.empty()) {
      std::vector<unsigned char> msg = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) queues_.erase(it);
      if (msg.size() != bytes)
        throw PeerError(peer, peers_[peer].hostId, concat(name(peer), " sent ", msg.size(), " bytes with tag ", tag,
                                                         "; rank ", rank_, " expected ", bytes));
      if (bytes) std::memcpy(data, msg.data(), bytes);
      return;
    }
    if (auto f = failureLocked(members, comm)) throw *f;
    if (departures_[peer].contains(comm))
      throw PeerError(peer, peers_[peer].hostId, concat(name(peer), " finalized its communicator without sending the ",
                                                       "message with tag ", tag, " that rank ", rank_, " waits for"));
    if (changed_.wait_until(lock, deadline.at()) == std::cv_status::timeout && deadline.expired() &&
        queues_.find(key) == queues_.end()) {
      std::string what = concat("bootstrap rank ", rank_, ": no message with tag ", tag, " from ", name(peer),
                                " before the deadline (HETCCL_TIMEOUT)");
      int blamed = peer;
      if (auto silent = silentMemberLocked(members, comm, peer)) {  // the awaited rank waits for that one
        blamed = silent->first;
        what += concat("; ", name(peer), " was heard from ", silenceMsLocked(peer) / 1000.0, " s ago but ",
                       name(blamed), " sent nothing for ", silent->second / 1000.0,
                       " s: it is stopped, hung or cut off, the likely cause");
      }
      TimeoutError timeout(blamed, peers_[blamed].hostId, what);
      if (!timedOut_) timedOut_ = timeout;  // named in the notice if this rank leaves over it
      throw timeout;
    }
  }
}

}  // namespace hetccl::bootstrap
