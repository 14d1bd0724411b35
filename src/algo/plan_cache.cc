#include "algo/plan_cache.hpp"

#include <cstring>

#include "algo/planner.hpp"

namespace hetccl::algo {
namespace {

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void putVector(std::string& out, const std::vector<size_t>& v) {
  put(out, v.size());
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(size_t));
}

}  // namespace

std::string planKey(std::span<const CollOp> group) {
  std::string key;
  key.reserve(group.size() * 96);
  put(key, group.size());
  for (const CollOp& op : group) {
    put(key, op.kind);
    put(key, op.sendbuff);
    put(key, op.recvbuff);
    put(key, op.count);
    put(key, op.type);
    put(key, op.op.kind);
    key.append(reinterpret_cast<const char*>(op.op.scalar), sizeof op.op.scalar);
    put(key, op.root);
    put(key, op.peer);
    if (op.kind == CollKind::AllToAllv)
      for (const auto* v : {&op.sendcounts, &op.sdispls, &op.recvcounts, &op.rdispls}) putVector(key, *v);
  }
  return key;
}

PlanCache::PlanCache(Topology topology, Tuning tuning, size_t capacity)
    : topology_(std::move(topology)), tuning_(tuning), capacity_(capacity) {}

std::shared_ptr<const Schedule> PlanCache::get(std::span<const CollOp> group) {
  if (capacity_ == 0) {
    ++misses_;
    return std::make_shared<const Schedule>(plan(topology_, group, tuning_));
  }
  std::string key = planKey(group);
  if (auto it = index_.find(key); it != index_.end()) {
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->schedule;
  }
  auto schedule = std::make_shared<const Schedule>(plan(topology_, group, tuning_));
  ++misses_;
  lru_.push_front(Entry{key, schedule});
  index_[std::move(key)] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  return schedule;
}

}  // namespace hetccl::algo
