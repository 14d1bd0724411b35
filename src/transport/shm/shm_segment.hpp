// A POSIX shared-memory segment holding one single-producer / single-consumer ring (one direction of
// one shm connection), and the ring's layout in that segment.
//
// Layout (all offsets multiples of 64):
//   RingHeader                      SegmentHeader (magic/version/geometry/ranks), token, head and tail on
//                                   separate cache lines
//   SlotInfo[slots]                 per slot: which message the piece belongs to and its byte count
//   data[slots][slotBytes]          the pieces themselves (slotBytes is a multiple of 64)
// The creator (sender) fills every field, then stores `magic` with release order; a reader that sees the
// magic (acquire) sees a fully initialised header. head/tail count slots ever published / released.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "transport/shm/segment_header.hpp"

namespace hetccl::transport::shm {

inline constexpr uint64_t kRingMagic = 0x4853'6c63'6374'6568ull;  // "hetcclSH" in little-endian bytes
inline constexpr uint32_t kRingVersion = 3;  ///< 2: SlotInfo carries a crc (HETCCL_CHECKSUM); 3: a call stamp

struct alignas(64) RingHeader {
  SegmentHeader segment;  ///< kind kRingKind (segment_header.hpp)
  uint64_t token;         ///< the connection token both ends derived through the bootstrap
  alignas(64) std::atomic<uint64_t> head;  ///< slots published by the sender (written by the sender only)
  alignas(64) std::atomic<uint64_t> tail;  ///< slots released by the receiver (written by the receiver only)
  alignas(64) std::atomic<uint32_t> senderClosed;    ///< the sender's connection was destroyed
  std::atomic<uint32_t> receiverClosed;              ///< the receiver's connection was destroyed
};
static_assert(std::is_standard_layout_v<RingHeader>);

/// Describes the piece in one slot; written by the sender before it publishes `head`.
struct SlotInfo {
  uint64_t message;  ///< the sender's request number (receiver's numbers match: both count from 1, FIFO)
  uint64_t bytes;    ///< piece length, <= slotBytes
  uint32_t crc;      ///< CRC32C of the piece when flags has kSlotHasCrc, else 0
  uint32_t flags;
  uint64_t stamp[4];  ///< the message's call stamp (transport/base/call_stamp.hpp words)
};
inline constexpr uint32_t kSlotHasCrc = 1u << 0;

/// Pointers into a mapped ring segment.
struct RingView {
  RingHeader* header = nullptr;
  SlotInfo* info = nullptr;
  unsigned char* data = nullptr;
  uint32_t slots = 0;
  uint64_t slotBytes = 0;

  unsigned char* slot(uint64_t index) const { return data + (index % slots) * slotBytes; }
  SlotInfo& slotInfo(uint64_t index) const { return info[index % slots]; }
};

/// Offsets of the three parts of a ring with `slots` slots of `slotBytes` bytes.
struct RingGeometry {
  size_t infoOffset;
  size_t dataOffset;
  size_t totalBytes;
  static RingGeometry of(uint32_t slots, uint64_t slotBytes);
};

/// Where a ring's data starts (RingGeometry::of(slots, ...).dataOffset).
size_t ringDataOffset(uint32_t slots);
/// The shm ring as a kind of segment: slots and slot bytes bounded far above what the configuration allows
/// (4096 and 1 GiB), so that the layout's arithmetic cannot overflow.
inline constexpr SegmentKind kRingKind{"shm ring", kRingMagic, kRingVersion, 1u << 16, uint64_t{1} << 40, &ringDataOffset};

/// RAII owner of one mapping of a named POSIX shm segment. Move-only. The destructor unmaps; a segment
/// this process created also has its name removed then (so no failure path between create() and the
/// peer's open leaves a file in /dev/shm); otherwise unlinking the name is explicit (unlink()).
class ShmSegment {
 public:
  /// Creates `name` (O_CREAT|O_EXCL, mode 0600), reserves `bytes` of memory for it (posix_fallocate:
  /// a /dev/shm too small fails here, with a message saying how much is needed and how to get it,
  /// instead of a SIGBUS on first touch) and maps it read-write. `sizingHint`, when not empty, is added
  /// to that message (how the caller's segments add up for a job). Throws SystemError naming the
  /// segment (e.g. EEXIST, ENOSPC); nothing is left behind on failure.
  static ShmSegment create(const std::string& name, size_t bytes, const std::string& sizingHint = "");
  /// Opens and maps `name` if it exists, belongs to this user, is not accessible to others and is at
  /// least `minBytes` long; nullopt while it does not exist yet or is still smaller (being created).
  /// Throws SystemError on other failures and InvalidArgument for a segment with foreign ownership/mode.
  static std::optional<ShmSegment> tryOpen(const std::string& name, size_t minBytes);
  /// Removes the name (ENOENT ignored); the mapping stays valid. Returns true if this call removed it.
  static bool unlink(const std::string& name) noexcept;

  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  /// The ring laid out in this segment (header fields must be valid).
  RingView ring() const;

 private:
  ShmSegment(std::string name, void* data, size_t size, bool ownsName)
      : name_(std::move(name)), data_(data), size_(size), ownsName_(ownsName) {}
  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool ownsName_ = false;  ///< created here: the destructor unlinks the name (ENOENT ignored)
};

}  // namespace hetccl::transport::shm
