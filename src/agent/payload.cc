#include "agent/payload.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace hetccl::agent {
namespace {

/// Host ranges at least this long travel over the socket straight from / into place; shorter ones and
/// device ranges go through a staging buffer of kStageBytes.
constexpr uint64_t kDirectBytes = 64 * 1024;
constexpr uint64_t kStageBytes = 1 << 20;
/// The UCX path: the largest piece of one range, and how many pieces are in flight at once.
constexpr uint64_t kNetPieceBytes = 4 << 20;
constexpr size_t kNetInFlight = 4;

uint64_t totalOf(std::span<const Segment> segments) {
  uint64_t t = 0;
  for (const Segment& s : segments) t += s.bytes;
  return t;
}

/// A staging buffer from the agent's pool (pinned where it has a GPU: device ranges copy at full speed),
/// taken at the first use and given back at the end of the payload.
class Stage {
 public:
  explicit Stage(rma::MemoryAccess& memory, uint64_t bytes = kStageBytes) : memory_(memory), bytes_(bytes) {}
  ~Stage() {
    if (buf_.data) memory_.recycle(buf_);
  }
  unsigned char* get() {
    if (!buf_.data) buf_ = memory_.staging(bytes_);
    return buf_.data;
  }

 private:
  rma::MemoryAccess& memory_;
  uint64_t bytes_;
  rma::MemoryAccess::Buffer buf_;
};

/// One message of the UCX path: `bytes` of the stream from range `seg` at `off`; `single`: all of it in
/// that range.
struct NetPiece {
  size_t seg = 0;
  uint64_t off = 0;
  uint64_t bytes = 0;
  bool single = false;
};

/// The pieces of the stream, from the ranges' sizes alone (both sides must cut it alike).
std::vector<NetPiece> netPieces(std::span<const Segment> segments) {
  std::vector<NetPiece> pieces;
  size_t seg = 0;
  uint64_t off = 0;
  while (seg < segments.size()) {
    const uint64_t size = segments[seg].bytes;
    if (size == 0) {
      ++seg;
    } else if (size >= kDirectBytes) {
      const uint64_t n = std::min(kNetPieceBytes, size - off);
      pieces.push_back(NetPiece{seg, off, n, true});
      off += n;
      if (off == size) {
        ++seg;
        off = 0;
      }
    } else {
      NetPiece p{seg, off, 0, false};
      while (seg < segments.size() && segments[seg].bytes < kDirectBytes && p.bytes < kStageBytes) {
        const uint64_t take = std::min(kStageBytes - p.bytes, segments[seg].bytes - off);
        p.bytes += take;
        off += take;
        if (off == segments[seg].bytes) {
          ++seg;
          off = 0;
        }
      }
      pieces.push_back(p);
    }
  }
  return pieces;
}

}  // namespace

bool PayloadLink::move(std::span<const Segment> segments, size_t& seg, uint64_t& off, unsigned char* buf, uint64_t n,
                       bool toBuf, void* stream) {
  // Copies grouped by kind so that the device ones of a chunk are one batch (one synchronisation, or
  // none when queued on `stream`).
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
  if (device.empty()) return false;
  if (stream) {
    memory_.copyAllAsync(deviceKind, device, stream);
    return true;
  }
  memory_.copyAll(deviceKind, device);
  return false;
}

void PayloadLink::idle(uint64_t& round, Deadline deadline, const std::function<void()>& poll, const char* what) {
  const uint64_t i = round++;
  if (i < 1024) return;
  if ((i & 63) == 0) {
    poll();
    // POLLRDHUP: the peer closed its side even when data of it is still unread (ofWrite()).
    pollfd p{sock_.fd(), POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0) {
      unsigned char b;
      const ssize_t got = ::recv(sock_.fd(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
      if (got == 0 || (p.revents & (POLLHUP | POLLERR | POLLRDHUP)))
        throw PeerError(-1, "", concat(peer_, ": connection closed while waiting for ", what, " (the agent stopped or died)"));
      if (got > 0 && !ofWrite_) throw PeerError(-1, "", concat(peer_, ": unexpected message while waiting for ", what));
    }
    if (deadline.expired())
      throw TimeoutError(-1, "", concat(peer_, ": no progress ", window_ ? "through the shared-memory window" : "over ucx", " (",
                                        what, ")"));
  }
  if (i < 20000) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void PayloadLink::pumpWindow(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll,
                             bool sending) {
  uint64_t left = totalOf(segments);
  size_t seg = 0;
  uint64_t off = 0, chunk = 0, round = 0;
  void* stream = engine_ ? engine_->stream() : nullptr;
  struct Drain {  // a failure leaves no copy running into a slot or the ranges
    CopyEngine* engine;
    ~Drain() {
      if (engine) engine->drain();
    }
  } drain{stream ? engine_ : nullptr};
  // Chunks whose copies are queued (their event; nullptr: done already) and that are not yet published
  // (sending) or released (receiving), in order.
  std::deque<void*> queued;
  std::string problem;
  while (left > 0 || !queued.empty()) {
    bool progress = false;
    while (!queued.empty() && (!queued.front() || engine_->gpu()->isReached(queued.front()))) {
      if (sending) window_->publish();
      else window_->release();
      queued.pop_front();
      progress = true;
    }
    if (left > 0 && queued.size() < window_->slots()) {
      unsigned char* slot = sending ? window_->freeSlotAhead(queued.size())
                                    : const_cast<unsigned char*>(window_->fullSlotAhead(queued.size(), problem));
      if (!problem.empty()) throw PeerError(-1, "", concat(peer_, ": shared-memory window: ", problem));
      if (slot) {
        const uint64_t n = std::min<uint64_t>(left, window_->slotBytes());
        void* event = nullptr;
        if (move(segments, seg, off, slot, n, sending, stream)) {
          event = engine_->event(chunk % window_->slots());
          engine_->gpu()->record(event, stream);
        }
        queued.push_back(event);
        ++chunk;
        left -= n;
        progress = true;
      }
    }
    if (progress) round = 0;
    else idle(round, deadline, poll, sending ? "a free window slot" : "the next chunk of the payload");
  }
}

void PayloadLink::pumpNet(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll,
                          bool sending) {
  const std::vector<NetPiece> pieces = netPieces(segments);
  std::vector<std::unique_ptr<Stage>> stages;
  for (size_t i = 0; i < kNetInFlight; ++i) stages.push_back(std::make_unique<Stage>(memory_, kNetPieceBytes));
  // Leaving with an exception: UCX must let go of every buffer first (the connection is closed after it).
  struct Abandon {
    NetPair* net;
    ~Abandon() {
      if (std::uncaught_exceptions() > 0) net->close();
    }
  } abandon{net_};
  struct Flight {
    transport::Request request;
    size_t piece;
    int stage;  ///< staging buffer, -1: in place
  };
  std::deque<Flight> flying;  // in order: completed in order, so piece k reuses the stage of piece k - kNetInFlight
  size_t next = 0;
  uint64_t round = 0;
  while (next < pieces.size() || !flying.empty()) {
    bool progress = false;
    while (!flying.empty() && (sending ? net_->send->test(flying.front().request) : net_->recv->test(flying.front().request))) {
      const Flight f = flying.front();
      flying.pop_front();
      if (!sending && f.stage >= 0) {  // scatter (device copies complete on return)
        size_t seg = pieces[f.piece].seg;
        uint64_t off = pieces[f.piece].off;
        move(segments, seg, off, stages[f.stage]->get(), pieces[f.piece].bytes, false);
      }
      progress = true;
    }
    if (next < pieces.size() && flying.size() < kNetInFlight) {
      poll();
      const NetPiece& p = pieces[next];
      const Segment& s = segments[p.seg];
      Flight f{0, next, -1};
      unsigned char* at = nullptr;
      if (p.single && s.data && !rma::isDevice(s.kind)) {
        at = s.data + p.off;
      } else {
        f.stage = static_cast<int>(next % kNetInFlight);
        at = stages[f.stage]->get();
        if (sending) {
          size_t seg = p.seg;
          uint64_t off = p.off;
          move(segments, seg, off, at, p.bytes, true);
        }
      }
      f.request = sending ? net_->send->isend(at, p.bytes) : net_->recv->irecv(at, p.bytes);
      flying.push_back(f);
      ++next;
      progress = true;
    }
    if (progress) round = 0;
    else idle(round, deadline, poll, sending ? "the peer to take the payload" : "the next piece of the payload");
  }
}

void PayloadLink::pumpSocket(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll,
                             bool sending) {
  // Host ranges of kDirectBytes and more go straight from / into place (a drained range has no memory:
  // it goes through the staging buffer); everything else is gathered into (scattered from) kStageBytes.
  const auto direct = [&](const Segment& t, uint64_t at) {
    return (sending || t.data) && !rma::isDevice(t.kind) && t.bytes - at >= kDirectBytes;
  };
  uint64_t left = totalOf(segments);
  size_t seg = 0;
  uint64_t off = 0;
  Stage stage(memory_);
  while (left > 0) {
    poll();
    const Segment& s = segments[seg];
    if (direct(s, off)) {
      const uint64_t n = std::min<uint64_t>(s.bytes - off, kStageBytes * 4);
      if (sending) sock_.sendAll(s.data + off, n, deadline, peer_);
      else sock_.recvAll(s.data + off, n, deadline, peer_);
      off += n;
      if (off == s.bytes) {
        ++seg;
        off = 0;
      }
      left -= n;
      continue;
    }
    // Up to kStageBytes, stopping before the next range that goes straight.
    uint64_t n = 0;
    for (size_t sg = seg, o = off; n < kStageBytes && sg < segments.size();) {
      const Segment& t = segments[sg];
      if (n > 0 && direct(t, o)) break;
      const uint64_t take = std::min(kStageBytes - n, t.bytes - o);
      n += take;
      o += take;
      if (o == t.bytes) {
        ++sg;
        o = 0;
      }
    }
    if (sending) {
      move(segments, seg, off, stage.get(), n, true);
      sock_.sendAll(stage.get(), n, deadline, peer_);
    } else {
      sock_.recvAll(stage.get(), n, deadline, peer_);
      move(segments, seg, off, stage.get(), n, false);
    }
    left -= n;
  }
}

void PayloadLink::send(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll) {
  if (window_) pumpWindow(segments, deadline, poll, true);
  else if (net_ && *net_) pumpNet(segments, deadline, poll, true);
  else pumpSocket(segments, deadline, poll, true);
}

void PayloadLink::recv(std::span<const Segment> segments, Deadline deadline, const std::function<void()>& poll) {
  if (window_) pumpWindow(segments, deadline, poll, false);
  else if (net_ && *net_) pumpNet(segments, deadline, poll, false);
  else pumpSocket(segments, deadline, poll, false);
}

}  // namespace hetccl::agent
