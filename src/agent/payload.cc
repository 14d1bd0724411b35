#include "agent/payload.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace hetccl::agent {
namespace {

/// Host ranges at least this long travel over the socket straight from / into place; shorter ones and
/// device ranges go through a staging buffer of kStageBytes.
constexpr uint64_t kDirectBytes = 64 * 1024;
constexpr uint64_t kStageBytes = 1 << 20;

uint64_t totalOf(std::span<const Segment> segments) {
  uint64_t t = 0;
  for (const Segment& s : segments) t += s.bytes;
  return t;
}

/// A staging buffer from the agent's pool (pinned where it has a GPU: device ranges copy at full speed),
/// taken at the first use and given back at the end of the payload.
class Stage {
 public:
  explicit Stage(rma::MemoryAccess& memory) : memory_(memory) {}
  ~Stage() {
    if (buf_.data) memory_.recycle(buf_);
  }
  unsigned char* get() {
    if (!buf_.data) buf_ = memory_.staging(kStageBytes);
    return buf_.data;
  }

 private:
  rma::MemoryAccess& memory_;
  rma::MemoryAccess::Buffer buf_;
};

}  // namespace

void PayloadLink::move(std::span<const Segment> segments, size_t& seg, uint64_t& off, unsigned char* buf, uint64_t n,
                       bool toBuf) {
  // Copies grouped by kind so that the device ones of a chunk are one batch with one synchronisation.
  std::vector<rma::MemoryAccess::Copy> host, device;
  rma::MemKind deviceKind = rma::MemKind::Host;
  uint64_t at = 0;
  while (at < n) {
    const Segment& s = segments[seg];
    const uint64_t take = std::min(n - at, s.bytes - off);
    if (s.data) {
      rma::MemoryAccess::Copy c = toBuf ? rma::MemoryAccess::Copy{buf + at, s.data + off, take}
                                        : rma::MemoryAccess::Copy{s.data + off, buf + at, take};
      if (rma::isDevice(s.kind)) {
        device.push_back(c);
        deviceKind = s.kind;
      } else {
        host.push_back(c);
      }
    }
    at += take;
    off += take;
    if (off == s.bytes) {
      ++seg;
      off = 0;
    }
  }
  if (!host.empty()) memory_.copyAll(rma::MemKind::Host, host);
  if (!device.empty()) memory_.copyAll(deviceKind, device);
}

template <typename Ready>
void PayloadLink::waitWindow(Ready&& ready, Deadline deadline, const std::function<void()>& poll, const char* what) {
  // Spin briefly (a chunk is usually a few microseconds away), then yield, then sleep in short steps;
  // every 64 rounds check the stop/cancel flags, the deadline and the socket: it is silent while a
  // payload crosses the window, so readable means the peer closed it (or sent garbage).
  for (uint64_t i = 0;; ++i) {
    if (ready()) return;
    if (i < 1024) continue;
    if ((i & 63) == 0) {
      poll();
      pollfd p{sock_.fd(), POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) {
        unsigned char b;
        const ssize_t got = ::recv(sock_.fd(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (got == 0 || (p.revents & (POLLHUP | POLLERR)))
          throw PeerError(-1, "", concat(peer_, ": connection closed while waiting for ", what, " (the agent stopped or died)"));
        if (got > 0) throw PeerError(-1, "", concat(peer_, ": unexpected message while waiting for ", what));
      }
      if (deadline.expired())
        throw TimeoutError(-1, "", concat(peer_, ": no progress through the shared-memory window (", what, ")"));
    }
    if (i < 20000) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void PayloadLink::send(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll) {
  uint64_t left = totalOf(segments);
  size_t seg = 0;
  uint64_t off = 0;
  if (window_) {
    while (left > 0) {
      unsigned char* slot = nullptr;
      waitWindow([&] { return (slot = window_->freeSlot()) != nullptr; }, deadline, poll, "a free window slot");
      const uint64_t n = std::min<uint64_t>(left, window_->slotBytes());
      move(segments, seg, off, slot, n, true);
      window_->publish();
      left -= n;
    }
    return;
  }
  Stage stage(memory_);
  while (left > 0) {
    poll();
    const Segment& s = segments[seg];
    if (!rma::isDevice(s.kind) && s.bytes - off >= kDirectBytes) {  // straight from place
      const uint64_t n = std::min<uint64_t>(s.bytes - off, kStageBytes * 4);
      sock_.sendAll(s.data + off, n, deadline, peer_);
      off += n;
      if (off == s.bytes) {
        ++seg;
        off = 0;
      }
      left -= n;
      continue;
    }
    // Gather up to kStageBytes, stopping before the next long host range.
    uint64_t n = 0;
    {
      size_t sg = seg;
      uint64_t o = off;
      while (n < kStageBytes && sg < segments.size()) {
        const Segment& t = segments[sg];
        if (n > 0 && !rma::isDevice(t.kind) && t.bytes - o >= kDirectBytes) break;
        const uint64_t take = std::min(kStageBytes - n, t.bytes - o);
        n += take;
        o += take;
        if (o == t.bytes) {
          ++sg;
          o = 0;
        }
      }
    }
    move(segments, seg, off, stage.get(), n, true);
    sock_.sendAll(stage.get(), n, deadline, peer_);
    left -= n;
  }
}

void PayloadLink::recv(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll) {
  uint64_t left = totalOf(segments);
  size_t seg = 0;
  uint64_t off = 0;
  if (window_) {
    while (left > 0) {
      const unsigned char* slot = nullptr;
      std::string problem;
      waitWindow(
          [&] {
            slot = window_->fullSlot(problem);
            if (!problem.empty()) throw PeerError(-1, "", concat(peer_, ": shared-memory window: ", problem));
            return slot != nullptr;
          },
          deadline, poll, "the next chunk of the payload");
      const uint64_t n = std::min<uint64_t>(left, window_->slotBytes());
      move(segments, seg, off, const_cast<unsigned char*>(slot), n, false);
      window_->release();
      left -= n;
    }
    return;
  }
  Stage stage(memory_);
  while (left > 0) {
    poll();
    const Segment& s = segments[seg];
    if (s.data && !rma::isDevice(s.kind) && s.bytes - off >= kDirectBytes) {  // straight into place
      const uint64_t n = std::min<uint64_t>(s.bytes - off, kStageBytes * 4);
      sock_.recvAll(s.data + off, n, deadline, peer_);
      off += n;
      if (off == s.bytes) {
        ++seg;
        off = 0;
      }
      left -= n;
      continue;
    }
    uint64_t n = 0;
    {
      size_t sg = seg;
      uint64_t o = off;
      while (n < kStageBytes && sg < segments.size()) {
        const Segment& t = segments[sg];
        if (n > 0 && t.data && !rma::isDevice(t.kind) && t.bytes - o >= kDirectBytes) break;
        const uint64_t take = std::min(kStageBytes - n, t.bytes - o);
        n += take;
        o += take;
        if (o == t.bytes) {
          ++sg;
          o = 0;
        }
      }
    }
    sock_.recvAll(stage.get(), n, deadline, peer_);
    move(segments, seg, off, stage.get(), n, false);
    left -= n;
  }
}

}  // namespace hetccl::agent
