#include "transport/shm/segment_header.hpp"

#include "core/error.hpp"

namespace hetccl::transport::shm {

void describeSegment(SegmentHeader& h, const SegmentKind& kind, uint32_t slots, uint64_t slotBytes, int fromRank,
                     int toRank) {
  h.version = kind.version;
  h.slots = slots;
  h.slotBytes = slotBytes;
  h.totalBytes = kind.totalBytes(slots, slotBytes);
  h.fromRank = fromRank;
  h.toRank = toRank;
}

void publishSegment(SegmentHeader& h, const SegmentKind& kind) { h.magic.store(kind.magic, std::memory_order_release); }

bool segmentPublished(const SegmentHeader& h, const SegmentKind& kind) {
  return h.magic.load(std::memory_order_acquire) == kind.magic;
}

std::string segmentProblem(const SegmentHeader& h, const SegmentKind& kind, size_t mappedBytes, int fromRank,
                           int toRank) {
  if (!segmentPublished(h, kind)) return concat("has a bad magic for a segment of kind '", kind.name, "'");
  if (h.version != kind.version) return concat("has version ", h.version, " (expected ", kind.version, ")");
  if (h.slots == 0 || h.slots > kind.maxSlots || h.slotBytes == 0 || h.slotBytes % 64 != 0 ||
      h.slotBytes > kind.maxSlotBytes)
    return concat("has a bad geometry: ", h.slots, " slots of ", h.slotBytes, " bytes");
  if (h.totalBytes != kind.totalBytes(h.slots, h.slotBytes) || h.totalBytes != mappedBytes)
    return concat("has a size of ", h.totalBytes, " bytes (", mappedBytes, " mapped) that does not match ", h.slots,
                  " slots of ", h.slotBytes, " bytes");
  if (h.fromRank != fromRank || h.toRank != toRank)
    return concat("is for ranks ", h.fromRank, "->", h.toRank, " (expected ", fromRank, "->", toRank, ")");
  return "";
}

}  // namespace hetccl::transport::shm
