// The RMA service's window path between ranks of one host (window.hpp): set-up at hetcclRmaInit, and the
// progress thread's side of it -- a message's bytes (its ranges end to end, in order) cut into chunks of
// the window's slot size, copied in by the sender and out by the receiver: many small ranges share a chunk,
// a large range spans several chunks. Device copies are pipelined (copy_engine.hpp): the copies of up to a
// window of chunks are queued on the channel's own stream at once, each chunk published (sender) or
// released (receiver) in order once its event is reached -- the progress thread never waits on a copy.
#include <algorithm>
#include <cstdio>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/crypto.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "rma/rma_service.hpp"

namespace hetccl::rma {
namespace {

/// The copies that move the next `len` bytes of a message's byte stream -- its ranges' bytes end to end,
/// in order (`offsets` into `base`, `sizes`), from `cur.done` on -- between memory and `slot` (toSlot: into
/// the slot). Chunks come in order, so the cursor's range only moves forward.
std::vector<MemoryAccess::Copy> chunkCopies(unsigned char* base, const std::vector<uint64_t>& offsets,
                                            const std::vector<uint64_t>& sizes, WindowCursor& cur, uint64_t len,
                                            unsigned char* slot, bool toSlot) {
  const uint64_t from = cur.done;
  while (cur.range < sizes.size() && cur.start + sizes[cur.range] <= from) cur.start += sizes[cur.range++];
  std::vector<MemoryAccess::Copy> out;
  uint64_t at = cur.start;  // where range i starts in the stream
  for (size_t i = cur.range; i < sizes.size() && at < from + len; at += sizes[i++]) {
    const uint64_t lo = std::max(at, from), hi = std::min(at + sizes[i], from + len);
    if (lo >= hi) continue;
    unsigned char* mem = base + offsets[i] + (lo - at);
    unsigned char* s = slot + (lo - from);
    out.push_back(toSlot ? MemoryAccess::Copy{s, mem, hi - lo} : MemoryAccess::Copy{mem, s, hi - lo});
  }
  return out;
}

/// The message's size: summed at its first chunk, then kept in the cursor.
uint64_t totalOf(WindowCursor& cur, const std::vector<uint64_t>& sizes) {
  if (!cur.total) {
    uint64_t t = 0;
    for (uint64_t b : sizes) t += b;
    cur.total = t;
  }
  return *cur.total;
}

std::string windowName(const unsigned char (&tag)[16], int from, int to) {
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", tag[i]);
  return concat("/hetccl-rmaw-", hex, "-", from, "-", to);
}

}  // namespace

bool windowWanted(const PeerInfo& self, const PeerInfo& peer) {
  const std::string mode = config().str("HETCCL_RMA_WINDOW");
  if (mode != "auto" && mode != "on" && mode != "off")
    throw InvalidArgument(concat("HETCCL_RMA_WINDOW=", mode, " (expected auto, on or off)"));
  if (peer.rank == self.rank || peer.hostId != self.hostId || mode == "off") return false;
  return mode == "on" || peer.deviceKind != DeviceKind::Host || self.deviceKind != DeviceKind::Host;
}

void RmaService::setUpWindows(bootstrap::Bootstrap& boot) {
  const Config& c = config();
  const auto slots = static_cast<uint32_t>(c.integer("HETCCL_RMA_WINDOW_SLOTS", 2, 64));
  const uint64_t slotBytes = (static_cast<uint64_t>(c.integer("HETCCL_RMA_WINDOW_BYTES", 64 << 10, 1 << 30)) + 63) / 64 * 64;
  const int n = size();
  const PeerInfo& self = peers_[rank_];
  auto wanted = [&](int p) { return windowWanted(self, peers_[p]); };
  // Round 1: every rank's random name tag and the windows it created (one byte per peer).
  const size_t row = 16 + static_cast<size_t>(n);
  std::vector<unsigned char> created(row * n, 0);
  unsigned char* mine = created.data() + row * rank_;
  bootstrap::randomBytes(std::span<unsigned char>(mine, 16));
  unsigned char (&myTag)[16] = *reinterpret_cast<unsigned char (*)[16]>(mine);
  for (int p = 0; p < n; ++p) {
    if (!wanted(p)) continue;
    try {
      channels_[p].outWindow = Window::create(windowName(myTag, rank_, p), rank_, p, slots, slotBytes, memory_->gpu());
      mine[16 + p] = 1;
    } catch (const Error& e) {
      HETCCL_INFO(log::kInit, "rank ", rank_, ": no RMA window to rank ", p, " (its pieces take the connection): ", e.what());
    }
  }
  boot.allGather(created.data(), row);
  // Round 2: the windows every rank opened (one byte per peer).
  std::vector<unsigned char> opened(static_cast<size_t>(n) * n, 0);
  for (int p = 0; p < n; ++p) {
    if (p == rank_ || !created[row * p + 16 + rank_] || !wanted(p)) continue;
    const auto& tag = *reinterpret_cast<const unsigned char (*)[16]>(created.data() + row * p);
    try {
      channels_[p].inWindow = Window::open(windowName(tag, p, rank_), p, rank_, memory_->gpu());
      opened[static_cast<size_t>(n) * rank_ + p] = 1;
    } catch (const Error& e) {
      HETCCL_INFO(log::kInit, "rank ", rank_, ": cannot use the RMA window from rank ", p, ": ", e.what());
    }
  }
  boot.allGather(opened.data(), static_cast<size_t>(n));
  // A direction uses its window only where it was created and opened; both ends now know alike.
  for (int p = 0; p < n; ++p)
    if (p != rank_ && !opened[static_cast<size_t>(n) * p + rank_]) channels_[p].outWindow.reset();
}

void* RmaService::queueChunk(Channel& ch, MemKind kind, const std::vector<MemoryAccess::Copy>& copies, size_t eventIndex) {
  if (!isDevice(kind) || !memory_->gpu()) {
    memory_->copyAll(kind, copies);
    return nullptr;
  }
  if (!ch.windowCopies) ch.windowCopies = std::make_unique<CopyEngine>(memory_->gpu());
  void* stream = ch.windowCopies->stream();
  memory_->copyAllAsync(kind, copies, stream);
  void* event = ch.windowCopies->event(eventIndex);
  memory_->gpu()->record(event, stream);
  return event;
}

bool RmaService::sendWindowChunks(Channel& ch, OutMsg& msg, bool& moved) {
  WindowCursor& cur = ch.windowOut;
  Window& w = *ch.outWindow;
  const uint64_t total = totalOf(cur, msg.sizes);
  // (no chunk at all for a message without bytes: the receiver takes none)
  for (;;) {
    bool progress = false;
    while (!ch.outQueued.empty() && (!ch.outQueued.front() || memory_->gpu()->isReached(ch.outQueued.front()))) {
      w.publish();  // its bytes are in the slot
      ch.outQueued.pop_front();
      progress = true;
    }
    if (cur.done < total && ch.outQueued.size() < std::min(w.slots(), kMaxWindowSlots)) {
      if (unsigned char* slot = w.freeSlotAhead(ch.outQueued.size())) {
        const uint64_t len = std::min(w.slotBytes(), total - cur.done);
        ch.outQueued.push_back(queueChunk(ch, msg.srcKind, chunkCopies(msg.src, msg.srcOffsets, msg.sizes, cur, len, slot, true),
                                          ch.outChunks++ % kMaxWindowSlots));
        cur.done += len;
        progress = true;
      }
    }
    if (!progress) break;
    moved = true;
  }
  if (cur.done < total || !ch.outQueued.empty()) return false;  // slots full or copies running: later
  cur = {};
  return true;
}

bool RmaService::recvWindowChunks(int peer, Channel& ch) {
  Incoming& in = ch.in;
  WindowCursor& cur = in.window;
  Window& w = *ch.inWindow;
  const uint64_t total = totalOf(cur, in.sizes);
  const auto failed = [&](const Error& e) {
    HETCCL_WARN(log::kNet, "rank ", rank_, ": RMA data from ", peerName(peer), " could not be copied: ", e.what());
    in.access.status = Status::Failed;
    in.dst = nullptr;  // drain the rest
  };
  bool did = false;
  for (;;) {
    bool progress = false;
    // Applied before its slot is released, and the transfer acknowledged only after its last chunk.
    while (!ch.inQueued.empty()) {
      bool done = true;
      try {
        done = !ch.inQueued.front() || memory_->gpu()->isReached(ch.inQueued.front());
      } catch (const Error& e) {
        failed(e);
      }
      if (!done) break;
      w.release();
      ch.inQueued.pop_front();
      progress = true;
    }
    if (cur.done < total && ch.inQueued.size() < std::min(w.slots(), kMaxWindowSlots)) {
      std::string problem;
      const unsigned char* slot = w.fullSlotAhead(ch.inQueued.size(), problem);
      if (!problem.empty())
        throw PeerError(peer, peers_[peer].hostId, concat(peerName(peer), " broke the RMA window protocol: ", problem));
      if (slot) {
        const uint64_t len = std::min(w.slotBytes(), total - cur.done);
        void* event = nullptr;
        if (in.dst) {
          try {
            event = queueChunk(ch, in.dstKind,
                               chunkCopies(in.dst, in.dstOffsets, in.sizes, cur, len, const_cast<unsigned char*>(slot), false),
                               kMaxWindowSlots + ch.inChunks % kMaxWindowSlots);
          } catch (const Error& e) {
            failed(e);
          }
        }
        ch.inQueued.push_back(event);
        ++ch.inChunks;
        cur.done += len;
        progress = true;
      }
    }
    if (!progress) break;
    did = true;
  }
  if (cur.done == total && ch.inQueued.empty()) {
    in.applied = in.pieces.size();
    finishIncoming(peer, ch);
    did = true;
  }
  return did;
}

}  // namespace hetccl::rma
