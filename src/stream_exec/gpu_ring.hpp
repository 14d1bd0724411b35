// The pinned shared-memory rings of the stream pipeline: one per ordered pair of GPU ranks on one host.
//
// A ring is a POSIX shm segment that both processes map and register with their GPU runtime (pinned,
// mapped), so that copy engines write it and read it directly and GPU streams wait on its counters. No
// CPU touches the bytes, and no vendor path (IPC handles, NVLink, a vendor library) connects the two
// GPUs: the same ring joins an NVIDIA and an AMD GPU.
//
// Layout (offsets multiples of 64; slots start on a 4 KiB page):
//   GpuRingHeader   magic/version/geometry/identity, then two counters on their own cache lines:
//     published    pieces the sender's stream has finished copying in (written by the sender's GPU)
//     consumed     pieces the receiver's stream has finished copying out (written by the receiver's GPU)
//   slots[slots][slotBytes]
// Piece i lives in slot i % slots. The sender may fill piece i once consumed >= i + 1 - slots; the
// receiver may read it once published >= i + 1. Both counters only grow (GEQ waits), so they never need
// resetting; the two ends count pieces identically because both compile the same schedule.
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
inline constexpr uint32_t kGpuRingVersion = 1;

struct alignas(64) GpuRingHeader {
  std::atomic<uint64_t> magic;  ///< kGpuRingMagic once initialised (stored last, release)
  uint32_t version;
  uint32_t slots;
  uint64_t slotBytes;
  uint64_t totalBytes;
  int32_t fromRank;
  int32_t toRank;
  alignas(64) uint64_t published;
  alignas(64) uint64_t consumed;
};

/// One direction between this rank and a peer, mapped and registered. Move-only (via unique_ptr).
class GpuRing {
 public:
  /// `segment` holds an initialised ring; registers it with `gpu` (throws on failure).
  GpuRing(transport::shm::ShmSegment segment, const hetcclGpuPlugin_v1_t& gpu);
  ~GpuRing();
  GpuRing(const GpuRing&) = delete;
  GpuRing& operator=(const GpuRing&) = delete;

  uint32_t slots() const { return header()->slots; }
  uint64_t slotBytes() const { return header()->slotBytes; }
  char* slot(uint64_t piece) const { return data_ + (piece % slots()) * slotBytes(); }
  uint64_t* published() const { return &header()->published; }
  uint64_t* consumed() const { return &header()->consumed; }

  /// Pieces this rank's streams have been given on this ring so far (counted at enqueue time).
  uint64_t pieces = 0;

 private:
  GpuRingHeader* header() const { return static_cast<GpuRingHeader*>(segment_.data()); }
  transport::shm::ShmSegment segment_;
  const hetcclGpuPlugin_v1_t& gpu_;
  char* data_ = nullptr;
};

/// Both directions to every other rank (all on this host). Built collectively over `boot`.
struct GpuRingSet {
  std::vector<std::unique_ptr<GpuRing>> out;  ///< indexed by peer: this rank -> peer
  std::vector<std::unique_ptr<GpuRing>> in;   ///< indexed by peer: peer -> this rank

  /// Every rank creates its outgoing rings (`slots` x `slotBytes`), then maps its incoming ones (the
  /// names are unlinked as soon as both ends hold them). Throws naming the peer on failure.
  static GpuRingSet build(bootstrap::Bootstrap& boot, const hetcclGpuPlugin_v1_t& gpu, uint32_t slots,
                          uint64_t slotBytes);
};

}  // namespace hetccl::stream_exec
