// The header every shared-memory segment of slots that one process creates for another begins with: the
// shm transport's rings (shm_segment.hpp), the stream pipeline's GPU rings (exec/pipeline/gpu_ring.hpp) and
// the RMA windows between ranks or agents of one host (rma/window.hpp). One layout and one set of checks for
// all of them; each kind has its own magic and layout version (SegmentKind) and puts the fields of its own
// after this header (its first member).
//
// The creator fills the header (describeSegment) and its own fields, then publishes the kind's magic with
// release order (publishSegment), last: a process that sees the magic (acquire) sees all of it. The process
// that maps a segment checks it with segmentProblem() before it trusts one field of it: the segment comes
// from another process, which may be of another build, confused, or gone half-way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace hetccl::transport::shm {

/// What a kind of segment is.
struct SegmentKind {
  const char* name;       ///< for messages, e.g. "GPU ring"
  uint64_t magic;         ///< published last by the creator
  uint32_t version;       ///< of the kind's whole layout (this header and what follows it)
  uint32_t maxSlots;      ///< the most slots a mapper accepts (keeps the layout's arithmetic from overflowing)
  uint64_t maxSlotBytes;  ///< the largest slot a mapper accepts
  size_t (*dataOffset)(uint32_t slots);  ///< where slot 0 starts, after this kind's headers
  /// The whole segment: dataOffset(slots) + slots * slotBytes.
  size_t totalBytes(uint32_t slots, uint64_t slotBytes) const { return dataOffset(slots) + size_t{slots} * slotBytes; }
};

struct SegmentHeader {
  std::atomic<uint64_t> magic;  ///< the kind's magic once the creator has initialised everything (release)
  uint32_t version;             ///< the kind's layout version
  uint32_t slots;
  uint64_t slotBytes;   ///< a non-zero multiple of 64
  uint64_t totalBytes;  ///< the whole segment (SegmentKind::totalBytes)
  int32_t fromRank;     ///< the creator (the sender)
  int32_t toRank;       ///< the one that maps it (the receiver)
};
static_assert(sizeof(SegmentHeader) == 40 && std::is_standard_layout_v<SegmentHeader>);
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared-memory segments need lock-free 64-bit atomics");

/// The creator: fills every field of `h` but the magic (kind's version, the geometry, the ranks).
void describeSegment(SegmentHeader& h, const SegmentKind& kind, uint32_t slots, uint64_t slotBytes, int fromRank,
                     int toRank);
/// The creator, last: stores the kind's magic with release order.
void publishSegment(SegmentHeader& h, const SegmentKind& kind);
/// Whether the creator has published `h` as a segment of `kind` (acquire).
bool segmentPublished(const SegmentHeader& h, const SegmentKind& kind);

/// "" when `h` is a published segment of `kind` for fromRank -> toRank, with 1..maxSlots slots of a
/// non-zero multiple of 64 up to maxSlotBytes bytes each, and a totalBytes that is both the kind's layout for
/// that geometry and the size of the mapping (`mappedBytes`). Otherwise what is wrong, e.g. "has version 2
/// (expected 3)", "has a bad geometry: 0 slots of 64 bytes", "is for ranks 2->1". Reads nothing but the header.
std::string segmentProblem(const SegmentHeader& h, const SegmentKind& kind, size_t mappedBytes, int fromRank,
                           int toRank);

}  // namespace hetccl::transport::shm
