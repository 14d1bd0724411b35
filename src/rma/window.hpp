// The RMA window: one direction of the RMA channel between two ranks of one host, a POSIX shm segment
// that the sender creates and the receiver maps, both registering it with their GPU runtime (pinned).
// The pieces of puts and get answers cross it instead of the transport: the sender's copy engine (or
// memcpy, for host memory) writes a chunk straight into a slot, the receiver's reads it straight out of
// it -- one copy each side, by the copy engines for device memory, whatever the two GPUs' vendors. Headers,
// tables, acknowledgements and notifications still go over the channel's transport connections, and both
// sides cut every piece into chunks of at most slotBytes in the same order, so the window needs no
// message of its own.
//
// Layout (offsets multiples of 64): WindowHeader (magic, version, geometry, ranks; then `head`, the
// chunks published by the sender, and `tail`, the chunks released by the receiver, on cache lines of their
// own), then slots[slots][slotBytes]. Chunk c lives in slot c % slots; the sender writes chunk `head`
// when head - tail < slots and then publishes it (head + 1, release); the receiver reads chunk `tail` once
// head > tail (acquire) and releases it (tail + 1, release). Everything a peer wrote is validated before
// use: the header's geometry and ranks on open, and the counters on every read (a head that runs ahead of
// what fits fails the channel, never an out-of-bounds access).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/shm/cross_mapping_sync.hpp"
#include "transport/shm/segment_header.hpp"
#include "transport/shm/shm_segment.hpp"

namespace hetccl::device {
class GpuRuntime;
}

namespace hetccl::rma {

inline constexpr uint64_t kWindowMagic = 0x5752'6c63'6374'6568ull;  // "hetcclRW"
inline constexpr uint32_t kWindowVersion = 1;

/// A window path keeps at most this many chunks in flight (the event numbers of its copies cycle through
/// them), whatever a peer's window header says.
inline constexpr uint32_t kMaxWindowSlots = 64;

struct alignas(64) WindowHeader {
  transport::shm::SegmentHeader segment;  ///< magic kWindowMagic, version kWindowVersion (segment_header.hpp)
  alignas(64) std::atomic<uint64_t> head;  ///< chunks published (sender only)
  alignas(64) std::atomic<uint64_t> tail;  ///< chunks released (receiver only)
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the RMA window needs lock-free 64-bit atomics");

class Window {
 public:
  /// The sender's side: creates `name` (slots x slotBytes, slotBytes a multiple of 64) for `from` ->
  /// `to` and registers it with `gpu` (nullptr: a CPU rank). Throws SystemError (e.g. /dev/shm full).
  static std::unique_ptr<Window> create(const std::string& name, int from, int to, uint32_t slots, uint64_t slotBytes,
                                        device::GpuRuntime* gpu);
  /// The receiver's side: maps `name` (created by `from` for `to`), checks its header, unlinks the name
  /// and registers the mapping with `gpu`. Throws when it is missing, foreign or malformed.
  static std::unique_ptr<Window> open(const std::string& name, int from, int to, device::GpuRuntime* gpu);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  uint64_t slotBytes() const { return slotBytes_; }
  uint32_t slots() const { return slots_; }

  /// Sender: the slot of the next chunk, or nullptr while every slot holds an unreleased chunk.
  unsigned char* freeSlot() { return freeSlotAhead(0); }
  /// Sender: the slot of the chunk `ahead` places after the next one (chunks are published in order, so a
  /// sender may fill several before publishing the first), or nullptr while it is not free.
  unsigned char* freeSlotAhead(uint64_t ahead);
  /// Sender: the chunk in freeSlot() is written (its copies complete); the receiver may read it.
  void publish();
  /// Receiver: the slot of the next chunk, or nullptr while none is published; nullptr with `problem`
  /// set when the sender's counter is impossible (the caller fails the channel).
  const unsigned char* fullSlot(std::string& problem) { return fullSlotAhead(0, problem); }
  /// Receiver: the slot of the chunk `ahead` places after the next one to release, or nullptr while it
  /// is not published (chunks are released in order).
  const unsigned char* fullSlotAhead(uint64_t ahead, std::string& problem);
  /// Receiver: the chunk in fullSlot() has been copied out; the sender may reuse its slot.
  void release();
  /// Both: forgets the chunks in flight (the channel failed; the window is never used again).
  void reset() { sent_ = taken_ = 0; }

 private:
  Window(transport::shm::ShmSegment segment, device::GpuRuntime* gpu);
  WindowHeader* header() const { return static_cast<WindowHeader*>(segment_.data()); }
  static size_t slotsOffset();

  transport::shm::ShmSegment segment_;
  transport::shm::CrossMappingSync published_;  ///< `head` store to load, told to TSan (cross_mapping_sync.hpp)
  device::GpuRuntime* gpu_ = nullptr;  ///< registered with it (unregistered in the destructor)
  uint32_t slots_ = 0;
  uint64_t slotBytes_ = 0;
  unsigned char* data_ = nullptr;
  uint64_t sent_ = 0;   ///< sender: chunks published by this side
  uint64_t taken_ = 0;  ///< receiver: chunks released by this side
};

}  // namespace hetccl::rma
