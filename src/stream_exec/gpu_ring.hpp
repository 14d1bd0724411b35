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
//     expect       what the receiver's stream waits for now: the piece's slot + 1 (0: no piece), then
//                  the 4 stamp words it expects (written by that stream before each piece)
//   headers[slots] 64 bytes per slot: word 0 the slot's state (0 empty, 1 full), words 1-4 the call stamp
//                  of the piece in it (gpu_stamp.hpp), word 5 the piece's length in bytes (written with the
//                  stamp; read by the proxy of a ring between hosts, net_ring_proxy.hpp)
//   slots[slots][slotBytes]
// A handshake per slot, with constant values only: the sender waits until the slot is empty, copies the
// piece in, writes its stamp and then state = 1; the receiver publishes the stamp it expects (expect),
// waits until state == 1 and the slot's stamp words equal the expected ones, copies the piece out and
// writes state = 0. A stamp that differs stalls the receiver's stream; its monitor sees the full slot
// whose stamp is not the expected one and reports both (no kernel runs for the check: on a GPU that
// several processes share, each kernel costs a switch between their contexts). Every group of device calls starts at slot 0 and puts its
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
#include "transport/shm/shm_segment.hpp"

namespace hetccl::stream_exec {

inline constexpr uint64_t kGpuRingMagic = 0x4753'6c63'6374'6568ull;  // "hetcclSG"
inline constexpr uint32_t kGpuRingVersion = 3;
inline constexpr size_t kGpuSlotHeaderBytes = 64;  ///< per slot: state word + 32-byte stamp
inline constexpr uint64_t kSlotEmpty = 0, kSlotFull = 1;
inline constexpr int kSlotBytesWord = 5;  ///< word of a slot header that holds the piece's length
inline constexpr size_t kGpuExpectWords = 5;  ///< slot + 1 (0: none), then the expected stamp

struct alignas(64) GpuRingHeader {
  std::atomic<uint64_t> magic;  ///< kGpuRingMagic once initialised (stored last, release)
  uint32_t version;
  uint32_t slots;
  uint64_t slotBytes;
  uint64_t totalBytes;
  int32_t fromRank;
  int32_t toRank;
  alignas(64) uint64_t report[HETCCL_GPU_REPORT_WORDS];
  alignas(64) uint64_t expect[kGpuExpectWords];
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

  uint32_t slots() const { return header()->slots; }
  uint64_t slotBytes() const { return header()->slotBytes; }
  /// Slot of the k-th piece of a group.
  char* slot(uint64_t k) const { return data_ + (k % slots()) * slotBytes(); }
  /// The state word of that slot, followed by its stamp (4 words), as kernels address them.
  uint64_t* devSlotHeader(uint64_t k) const { return offsetDev(headerOffset() + (k % slots()) * kGpuSlotHeaderBytes); }
  uint64_t* devReport() const { return offsetDev(offsetof(GpuRingHeader, report)); }
  uint64_t* devExpect() const { return offsetDev(offsetof(GpuRingHeader, expect)); }
  /// Host views of the slot headers (state + stamp) and of the mismatch report (read by the monitor).
  uint64_t* slotHeader(uint32_t slot) const {
    return reinterpret_cast<uint64_t*>(static_cast<char*>(segment_.data()) + headerOffset() + slot * kGpuSlotHeaderBytes);
  }
  uint64_t* report() const { return header()->report; }
  /// Records a stamp mismatch (the stamp found, then the one expected: 8 words) unless one is recorded
  /// already (the first one stays); written before the report's flag word, which readers check first.
  void recordMismatch(const uint64_t words[8]) const;
  const uint64_t* expect() const { return header()->expect; }

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
