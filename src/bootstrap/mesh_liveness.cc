// Mesh liveness: heartbeats, silent peers, failure notices (see mesh.hpp). Everything here either runs
// on the reader thread without blocking, or is a best-effort send with a short deadline.
#include <algorithm>
#include <cstring>
#include <thread>

#include "bootstrap/mesh.hpp"
#include "bootstrap/wire.hpp"
#include "core/log.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr size_t kSubheaderBytes = 8;
constexpr int kNoticeBudgetMs = 200;  // for all peers together

const std::vector<unsigned char>& heartbeatFrame() {
  static const std::vector<unsigned char> frame = encodeFrame(FrameType::Heartbeat, 0, nullptr, 0);
  return frame;
}

std::string seconds(int64_t ms) { return ms % 1000 == 0 ? concat(ms / 1000, " s") : concat(ms / 1000.0, " s"); }

}  // namespace

std::vector<unsigned char> encodeNotice(int blamed, const std::string& reason, uint32_t comm) {
  const size_t keep = std::min(reason.size(), Mesh::kMaxNoticeReason);
  std::vector<unsigned char> payload(kSubheaderBytes + 4 + keep, 0);
  wire::putU32(payload.data(), comm);
  wire::putI32(payload.data() + kSubheaderBytes, blamed);
  std::memcpy(payload.data() + kSubheaderBytes + 4, reason.data(), keep);
  return encodeFrame(FrameType::Notice, 0, payload.data(), payload.size());
}

int Mesh::livenessTick() {
  const auto now = Clock::now();
  std::vector<int> live, silent;
  {
    std::lock_guard lock(mutex_);
    for (size_t p = 0; p < sockets_.size(); ++p) {
      if (!sockets_[p].valid() || failures_[p]) continue;
      live.push_back(static_cast<int>(p));
      if (now - lastHeard_[p] >= std::chrono::milliseconds(silenceMs_)) silent.push_back(static_cast<int>(p));
    }
  }
  if (now >= nextHeartbeat_) {
    for (int p : live) sendHeartbeat(p);
    nextHeartbeat_ = now + std::chrono::milliseconds(heartbeatMs_);
  }
  for (int p : silent)
    recordFailure(p, concat(name(p), " sent nothing on its bootstrap connection for ", seconds(silenceMs_),
                            " (HETCCL_TIMEOUT): the process is stopped or hung, or its host is unreachable"));
  auto untilBeat = std::chrono::duration_cast<std::chrono::milliseconds>(nextHeartbeat_ - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(untilBeat, 1, heartbeatMs_));
}

void Mesh::sendHeartbeat(int peer) {
  std::unique_lock lock(*sendLocks_[peer], std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is sending to it: those bytes show we are alive
  std::vector<unsigned char>& pending = pendingOut_[peer];
  if (pending.empty()) pending = heartbeatFrame();  // else the previous one is still on its way
  try {
    size_t n = sockets_[peer].sendSome(pending.data(), pending.size(), name(peer));
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
  } catch (const Error&) {  // the reader sees the same broken connection (EOF or reset) and records it
    pending.clear();
  }
}

void Mesh::sendLocked(int peer, const std::vector<unsigned char>& frame, Deadline deadline) {
  std::vector<unsigned char>& pending = pendingOut_[peer];
  if (!pending.empty()) {  // finish the heartbeat first, or the peer would read a torn frame
    sockets_[peer].sendAll(pending.data(), pending.size(), deadline, name(peer));
    pending.clear();
  }
  sockets_[peer].sendAll(frame.data(), frame.size(), deadline, name(peer));
}

void Mesh::broadcastNotice(int blamed, const std::string& reason, uint32_t comm, int budgetMs) noexcept {
  try {
    const std::vector<unsigned char> frame = encodeNotice(blamed, reason, comm);
    const Deadline budget = Deadline::afterMs(budgetMs);  // one budget for all: a few stuck peers cannot stall
    for (size_t p = 0; p < sockets_.size() && !budget.expired(); ++p) {
      if (!sockets_[p].valid() || static_cast<int>(p) == blamed) continue;
      {
        std::lock_guard lock(mutex_);
        if (failures_[p]) continue;
      }
      std::unique_lock sendLock(*sendLocks_[p], std::try_to_lock);
      while (!sendLock.owns_lock() && !budget.expired()) {  // another thread may be stuck sending to it
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        sendLock.try_lock();
      }
      if (!sendLock.owns_lock()) continue;
      try {
        sendLocked(static_cast<int>(p), frame, budget);
      } catch (const Error& e) {
        HETCCL_TRACE(log::kBootstrap, "bootstrap rank ", rank_, ": failure notice to ", name(static_cast<int>(p)),
                     " not sent: ", e.what());
      }
    }
  } catch (const std::exception& e) {  // out of memory: the notice is an optimisation
    HETCCL_TRACE(log::kBootstrap, "bootstrap rank ", rank_, ": failure notices not sent: ", e.what());
  }
}

void Mesh::notifyFailure(const PeerError& cause) {
  const int blamed = cause.peer();
  if (blamed < 0 || blamed >= static_cast<int>(peers_.size()) || blamed == rank_) return;
  broadcastNotice(blamed, cause.what(), 0, kNoticeBudgetMs);
}

void Mesh::noticeOnAbnormalExit() noexcept {
  int blamed = -1;
  std::string reason;
  {
    std::lock_guard lock(mutex_);
    if (leftWorld_) return;  // a normal teardown: the peers expect this rank to go
    const Failure* first = nullptr;
    for (size_t p = 0; p < failures_.size(); ++p)
      if (failures_[p] && departures_[p].empty() && (!first || failures_[p]->order < first->order)) {
        first = &*failures_[p];
        blamed = static_cast<int>(p);
      }
    if (first) {
      reason = first->error.what();
    } else if (timedOut_ && timedOut_->peer() >= 0 && timedOut_->peer() != rank_) {
      blamed = timedOut_->peer();  // nothing failed here, but a wait for that rank did
      reason = timedOut_->what();
    } else {
      return;
    }
  }
  broadcastNotice(blamed, reason, 0, kNoticeBudgetMs);
}

}  // namespace hetccl::bootstrap
