#include "rma/region_table.hpp"

#include "core/error.hpp"

namespace hetccl::rma {

RegionRef RegionTable::add(void* base, uint64_t bytes, MemKind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < slots_.size() && (slots_[i].live || slots_[i].accesses > 0)) ++i;
  if (i == slots_.size()) slots_.emplace_back();
  Slot& s = slots_[i];
  s.base = static_cast<unsigned char*>(base);
  s.bytes = bytes;
  s.kind = kind;
  s.generation += 1;  // generation 0 is never valid
  s.live = true;
  return {static_cast<uint32_t>(i), s.generation};
}

void RegionTable::remove(RegionRef ref, Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (ref.slot >= slots_.size() || slots_[ref.slot].generation != ref.generation) return;
  Slot& s = slots_[ref.slot];
  s.live = false;
  if (!idle_.wait_until(lock, deadline.at(), [&] { return s.accesses == 0; }))
    throw TimeoutError(-1, "", "deregistering: a remote access to the region did not finish within HETCCL_TIMEOUT");
}

Access RegionTable::acquire(RegionRef ref, std::span<const WireRange> ranges) {
  std::lock_guard<std::mutex> lock(mu_);
  Access a;
  if (ref.slot >= slots_.size() || ref.generation == 0 || slots_[ref.slot].generation < ref.generation) {
    a.status = Status::Unknown;
    return a;
  }
  Slot& s = slots_[ref.slot];
  if (s.generation != ref.generation || !s.live) {
    a.status = Status::Stale;
    return a;
  }
  a.regionBytes = s.bytes;
  for (const WireRange& r : ranges)
    if (r.offset > s.bytes || r.bytes > s.bytes - r.offset) {
      a.status = Status::OutOfBounds;
      a.badOffset = r.offset;
      a.badBytes = r.bytes;
      return a;
    }
  a.base = s.base;
  a.kind = s.kind;
  ++s.accesses;
  return a;
}

void RegionTable::release(RegionRef ref) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ref.slot >= slots_.size()) return;
  if (--slots_[ref.slot].accesses == 0) idle_.notify_all();
}

}  // namespace hetccl::rma
