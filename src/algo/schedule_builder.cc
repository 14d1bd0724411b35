#include "algo/schedule_builder.hpp"

#include <algorithm>
#include <utility>

namespace hetccl::algo {

uint32_t ScheduleBuilder::addReduction(const Reduction& r) {
  sched_.reductions.push_back(r);
  return static_cast<uint32_t>(sched_.reductions.size() - 1);
}

Location ScheduleBuilder::allocScratch(uint64_t bytes) {
  uint64_t at = (sched_.scratchBytes + 15) & ~uint64_t{15};
  sched_.scratchBytes = at + bytes;
  return Location::scratch(at);
}

void ScheduleBuilder::add(Step s, bool readsSrc, bool readsDst, bool writesDst) {
  if (s.bytes == 0) return;
  push(s, readsSrc ? s.bytes : 0, readsDst && !writesDst ? s.bytes : 0, writesDst ? s.bytes : 0);
}

void ScheduleBuilder::push(Step s, uint64_t srcReadBytes, uint64_t dstReadBytes, uint64_t dstWriteBytes) {
  const auto index = static_cast<uint32_t>(sched_.steps.size());
  scratchDeps_.clear();
  if (srcReadBytes) tracker_.read(s.src, srcReadBytes, index, scratchDeps_);
  if (dstReadBytes) tracker_.read(s.dst, dstReadBytes, index, scratchDeps_);
  if (dstWriteBytes) tracker_.write(s.dst, dstWriteBytes, index, scratchDeps_);
  commit(s);
}

void ScheduleBuilder::commit(Step s) {
  std::sort(scratchDeps_.begin(), scratchDeps_.end());
  scratchDeps_.erase(std::unique(scratchDeps_.begin(), scratchDeps_.end()), scratchDeps_.end());
  s.depBegin = static_cast<uint32_t>(sched_.deps.size());
  sched_.deps.insert(sched_.deps.end(), scratchDeps_.begin(), scratchDeps_.end());
  s.depEnd = static_cast<uint32_t>(sched_.deps.size());
  sched_.steps.push_back(s);
}

namespace {

Step makeStep(StepKind kind, int peer, Location dst, Location src, uint64_t bytes, uint32_t reduction) {
  Step s;
  s.kind = kind;
  s.peer = peer;
  s.dst = dst;
  s.src = src;
  s.bytes = bytes;
  s.reduction = reduction;
  return s;
}

}  // namespace

void ScheduleBuilder::send(int peer, Location src, uint64_t bytes) {
  add(makeStep(StepKind::Send, peer, {}, src, bytes, 0), true, false, false);
}
void ScheduleBuilder::recv(int peer, Location dst, uint64_t bytes) {
  add(makeStep(StepKind::Recv, peer, dst, {}, bytes, 0), false, false, true);
}
void ScheduleBuilder::recvReduce(int peer, Location dst, uint64_t bytes, uint32_t reduction) {
  add(makeStep(StepKind::RecvReduce, peer, dst, {}, bytes, reduction), false, true, true);
}
void ScheduleBuilder::copy(Location dst, Location src, uint64_t bytes) {
  if (dst == src) return;
  add(makeStep(StepKind::Copy, -1, dst, src, bytes, 0), true, false, true);
}
void ScheduleBuilder::reduce(Location dst, Location src, uint64_t bytes, uint32_t reduction) {
  add(makeStep(StepKind::Reduce, -1, dst, src, bytes, reduction), true, true, true);
}
void ScheduleBuilder::scale(Location dst, Location src, uint64_t bytes, uint32_t reduction) {
  add(makeStep(StepKind::Scale, -1, dst, src, bytes, reduction), true, false, true);
}
void ScheduleBuilder::divide(Location dst, uint64_t bytes, uint32_t reduction) {
  add(makeStep(StepKind::Divide, -1, dst, {}, bytes, reduction), false, true, true);
}

void ScheduleBuilder::domainCollective(DomainColl coll, Location dst, Location src, uint64_t bytes,
                                       uint64_t srcBytes, uint64_t dstBytes, int root, uint32_t reduction) {
  if (bytes == 0) return;
  Step s = makeStep(StepKind::DomainCollective, root, dst, src, bytes, reduction);
  s.domainColl = coll;
  push(s, srcBytes, 0, dstBytes);
}

void ScheduleBuilder::domainExchange(std::span<const DomainTransfer> transfers) {
  Step s;
  s.kind = StepKind::DomainCollective;
  s.domainColl = DomainColl::Exchange;
  s.transferBegin = static_cast<uint32_t>(sched_.transfers.size());
  const auto index = static_cast<uint32_t>(sched_.steps.size());
  scratchDeps_.clear();
  for (const DomainTransfer& t : transfers) {
    if (t.bytes == 0) continue;
    s.bytes += t.bytes;
    sched_.transfers.push_back(t);
    if (t.send) tracker_.read(t.at, t.bytes, index, scratchDeps_);
    else tracker_.write(t.at, t.bytes, index, scratchDeps_);
  }
  s.transferEnd = static_cast<uint32_t>(sched_.transfers.size());
  if (s.bytes > 0) commit(s);
}

Schedule ScheduleBuilder::finish() {
  Schedule out = std::move(sched_);
  sched_ = Schedule{};
  tracker_ = DepTracker{};
  return out;
}

}  // namespace hetccl::algo
