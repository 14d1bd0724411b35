// Builds a Schedule step by step in program order; dependencies are derived from the memory each step
// touches (DepTracker), so algorithms only list steps in an order that is correct when run one by one.
// Zero-byte steps are dropped, so algorithms need not special-case empty ranges.
#pragma once

#include <cstdint>
#include <span>

#include "algo/dep_tracker.hpp"
#include "algo/schedule.hpp"

namespace hetccl::algo {

class ScheduleBuilder {
 public:
  /// Registers a reduction (type, op, Avg divisor) and returns its index for reducing steps.
  uint32_t addReduction(const Reduction& r);
  /// Reserves `bytes` of scratch (16-byte aligned) and returns its start.
  Location allocScratch(uint64_t bytes);

  void send(int peer, Location src, uint64_t bytes);
  void recv(int peer, Location dst, uint64_t bytes);
  void recvReduce(int peer, Location dst, uint64_t bytes, uint32_t reduction);
  /// Dropped when dst == src.
  void copy(Location dst, Location src, uint64_t bytes);
  void reduce(Location dst, Location src, uint64_t bytes, uint32_t reduction);
  void scale(Location dst, Location src, uint64_t bytes, uint32_t reduction);
  void divide(Location dst, uint64_t bytes, uint32_t reduction);
  /// A vendor collective in this rank's domain (see DomainColl for `bytes` and `root`): it reads
  /// [src, src + srcBytes) (nothing when srcBytes is 0: a Broadcast's non-root) and writes
  /// [dst, dst + dstBytes) (nothing when 0: a Reduce's non-root). Dropped when `bytes` is 0.
  void domainCollective(DomainColl coll, Location dst, Location src, uint64_t bytes, uint64_t srcBytes,
                        uint64_t dstBytes, int root, uint32_t reduction);

  /// A DomainColl::Exchange step: `transfers` (domain ranks) launched together by the vendor library.
  /// Reads every sent range, writes every received one. Dropped when there is nothing to move.
  void domainExchange(std::span<const DomainTransfer> transfers);

  /// The schedule built so far (the builder is left empty).
  Schedule finish();

 private:
  void add(Step s, bool readsSrc, bool readsDst, bool writesDst);
  /// Appends `s` with dependencies for the byte ranges it reads at src / dst and writes at dst.
  void push(Step s, uint64_t srcReadBytes, uint64_t dstReadBytes, uint64_t dstWriteBytes);
  /// Appends `s` waiting for the steps collected in scratchDeps_.
  void commit(Step s);

  Schedule sched_;
  DepTracker tracker_;
  std::vector<uint32_t> scratchDeps_;
};

}  // namespace hetccl::algo
