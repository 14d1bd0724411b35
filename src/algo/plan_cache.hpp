// Schedules of recent groups, reused when a group of the same shape comes again (the same operations,
// counts, types, operators and scalars, roots, peers, AllToAllv tables and buffer addresses): training
// loops repeat the same calls on the same buffers, and planning a large group costs more than queuing it.
// The schedule is a pure function of (topology, group, tuning), all fixed for one cache, so a hit returns
// exactly what plan() would. Least recently used entries go first. Not thread-safe (one per executor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "algo/coll_op.hpp"
#include "algo/schedule.hpp"
#include "algo/topology.hpp"
#include "algo/tuning.hpp"

namespace hetccl::algo {

class PlanCache {
 public:
  /// Plans with `topology` and `tuning`, keeping at most `capacity` schedules (0: plan every time).
  PlanCache(Topology topology, Tuning tuning, size_t capacity);

  /// The schedule plan() returns for `group` (throws what plan() throws; a rejected group is not cached).
  std::shared_ptr<const Schedule> get(std::span<const CollOp> group);

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  const Topology& topology() const { return topology_; }
  const Tuning& tuning() const { return tuning_; }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const Schedule> schedule;
  };
  const Topology topology_;
  const Tuning tuning_;
  const size_t capacity_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  uint64_t hits_ = 0, misses_ = 0;
};

/// The bytes that identify `group` for the cache (every field plan() reads).
std::string planKey(std::span<const CollOp> group);

}  // namespace hetccl::algo
