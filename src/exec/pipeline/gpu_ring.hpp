// The pinned shared-memory rings of the stream pipeline: one per ordered pair of GPU ranks on one host.
//
// A ring is a POSIX shm segment that both processes map and register with their GPU runtime (pinned,
// mapped), so that copy engines write it and read it directly and GPU streams wait on its counters. No
// CPU touches the bytes, and no vendor path (IPC handles, NVLink, a vendor library) connects the two
// GPUs: the same ring joins an NVIDIA and an AMD GPU.
//
// Layout (offsets multiples of 64; slots start on a 4 KiB page):
//   GpuRingHeader   magic/version/geometry/identity, then on its own cache line:
//     report       the first call-stamp mismatch found on this ring (state, the stamp found, the stamp
//                  expected), written by the receiver's monitor; both ranks' monitors read it
//     expect       the token the receiver's stream waits for now (gpu_stamp.hpp: it names the slot; 0: none),
//                  written by that stream before each piece
//     sentGroups / expectedGroups   the stamp words 0-2 of the last kGpuGroupLogEntries groups on this ring,
//                  as the sender's and the receiver's host queued them (entry = group number % entries,
//                  tagged with groupTag): a monitor names the calls of a mismatch from a token through them
//   headers[slots] 64 bytes per slot: word 0 the slot's state (0 empty, else the token of the piece in it),
//                  words 1-4 the piece's call stamp and word 5 its length in bytes, written only on rings
//                  between hosts (for the proxy, net_ring_proxy.hpp; the receiving proxy writes them too)
//   slots[slots][slotBytes]
// A handshake per slot, with constant values only: the sender waits until the slot is empty, copies the
// piece in and writes its token; the receiver publishes the token it expects (expect), releases the slot of
// its previous piece, waits until the slot holds that token, and copies the piece out. Three stream memory
// operations per piece in all, on the sender's side one wait and one write (each costs about a microsecond
// of its stream: bench/results/stream_chain_probe_h200_2026-11-30). A piece of another call (another kind,
// type, op, group number, byte count or piece number) carries another token and stalls the receiver's stream;
// its monitor sees the slot holding a token that is not the expected one and reports both calls (no kernel
// runs for the check: on a GPU that several processes share, each kernel costs a switch between their
// contexts). Every group of device calls starts at slot 0 and puts its
// k-th piece on the ring into slot k % slots, so nothing the host knows about earlier calls is baked into
// the queued work: the same work captured into a CUDA graph is right on every replay. Both ends count
// pieces identically because both compile the same schedule.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "device/base/gpu_plugin.h"
#include "transport/shm/segment_header.hpp"
#include "transport/shm/shm_segment.hpp"

namespace hetccl::stream_exec {

inline constexpr uint64_t kGpuRingMagic = 0x4753'6c63'6374'6568ull;  // "hetcclSG"
inline constexpr uint32_t kGpuRingVersion = 4;
inline constexpr size_t kGpuSlotHeaderBytes = 64;  ///< per slot: state word (token) + 32-byte stamp + length
inline constexpr uint64_t kSlotEmpty = 0;  ///< a full slot holds its piece's token (gpu_stamp.hpp), never 0
inline constexpr int kSlotBytesWord = 5;  ///< word of a slot header that holds the piece's length
inline constexpr size_t kGpuGroupLogEntries = 64;

/// One group's stamp words 0-2 in a ring's group log; `tag` is groupTag + 1 (0: being written or empty).
struct GpuGroupLogEntry {
  uint64_t tag;
  uint64_t words[3];
};

/// Which end's host logged a group: the sender's (what it sent) or the receiver's (what it expects).
enum class GroupLog { Sent, Expected };

struct alignas(64) GpuRingHeader {
  transport::shm::SegmentHeader segment;  ///< magic kGpuRingMagic, version kGpuRingVersion (segment_header.hpp)
  alignas(64) uint64_t report[HETCCL_GPU_REPORT_WORDS];
  alignas(64) uint64_t expect;
  alignas(64) GpuGroupLogEntry sentGroups[kGpuGroupLogEntries];
  GpuGroupLogEntry expectedGroups[kGpuGroupLogEntries];
};

/// One direction between this rank and a peer, mapped and registered. Move-only (via unique_ptr).
/// Host addresses are for copies and the host; `dev*` addresses are what kernels use (devicePointer()).
class GpuRing {
 public:
  /// `segment` holds an initialised ring; registers it with `gpu` (throws on failure).
  GpuRing(transport::shm::ShmSegment segment, const hetcclGpuPlugin_t& gpu);
  ~GpuRing();
  GpuRing(const GpuRing&) = delete;
  GpuRing& operator=(const GpuRing&) = delete;

  uint32_t slots() const { return header()->segment.slots; }
  uint64_t slotBytes() const { return header()->segment.slotBytes; }
  /// Slot of the k-th piece of a group.
  char* slot(uint64_t k) const { return data_ + (k % slots()) * slotBytes(); }
  /// The state word of that slot, followed by its stamp (4 words) and length, as streams address them.
  uint64_t* devSlotHeader(uint64_t k) const { return offsetDev(headerOffset() + (k % slots()) * kGpuSlotHeaderBytes); }
  uint64_t* devReport() const { return offsetDev(offsetof(GpuRingHeader, report)); }
  uint64_t* devExpect() const { return offsetDev(offsetof(GpuRingHeader, expect)); }
  /// Host views of the slot headers (state, stamp, length) and of the mismatch report (read by the monitor).
  uint64_t* slotHeader(uint32_t slot) const {
    return reinterpret_cast<uint64_t*>(static_cast<char*>(segment_.data()) + headerOffset() + slot * kGpuSlotHeaderBytes);
  }
  /// The state word of the slot a piece token names (gpu_stamp.hpp), or nullptr when it names none of this
  /// ring's slots (0: nothing awaited; or a token of another ring's size).
  uint64_t* tokenHeader(uint64_t token) const;
  uint64_t* report() const { return header()->report; }
  /// Records a stamp mismatch (the stamp found, then the one expected: 8 words) unless one is recorded
  /// already (the first one stays); written before the report's flag word, which readers check first.
  void recordMismatch(const uint64_t words[8]) const;
  const uint64_t* expect() const { return &header()->expect; }

  /// Logs a group this end queued on the ring (its stamp words 0-2; word1 is its number on the ring) before
  /// its first piece is queued. Host only; the monitors read the logs.
  void logGroup(GroupLog log, uint64_t word0, uint64_t word1, uint64_t word2) const;
  /// The stamp behind `token` from `log` (words 0-2 from the entry whose tag matches, word3 the token's piece
  /// number modulo 2^16); false when no entry has the token's tag (a group more than kGpuGroupLogEntries
  /// groups old, or not a token of this ring's calls).
  bool findGroup(GroupLog log, uint64_t token, uint64_t stamp[4]) const;

  /// Where the slot headers start in the segment.
  static size_t headerOffset();

 private:
  GpuRingHeader* header() const { return static_cast<GpuRingHeader*>(segment_.data()); }
  uint64_t* offsetDev(size_t offset) const { return reinterpret_cast<uint64_t*>(dev_ + offset); }
  transport::shm::ShmSegment segment_;
  const hetcclGpuPlugin_t& gpu_;
  char* data_ = nullptr;
  char* dev_ = nullptr;  // the segment's address for kernels
};

/// Both directions to every other rank. Built collectively over `boot`.
///
/// A peer on this host shares each ring with this rank (one segment, both processes map it). A peer on
/// another host (`remote`) gets two rings only this process maps, one per direction, with the same layout:
/// the streams use them exactly as a shared ring, and the NetRingProxy (net_ring_proxy.hpp) mirrors them
/// with the peer's over the network (a full slot of `out` is sent and lands in the peer's `in`, the peer's
/// release comes back as a credit that empties the slot here).
struct GpuRingSet {
  std::vector<std::unique_ptr<GpuRing>> out;  ///< indexed by peer: this rank -> peer
  std::vector<std::unique_ptr<GpuRing>> in;   ///< indexed by peer: peer -> this rank
  std::vector<bool> remote;                   ///< indexed by peer: on another host (its rings are mirrored)

  /// Every rank creates its outgoing rings (`slots` x `slotBytes`), then maps its incoming ones (the
  /// names are unlinked as soon as both ends hold them); rings to other hosts are created private.
  /// Throws naming the peer on failure.
  static GpuRingSet build(bootstrap::Bootstrap& boot, const hetcclGpuPlugin_t& gpu, uint32_t slots,
                          uint64_t slotBytes);
};

}  // namespace hetccl::stream_exec
