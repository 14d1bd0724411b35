// Derives step dependencies from memory accesses: a step that reads a range waits for its last writer;
// a step that writes a range waits for the last writer and every reader since (so a buffer is not
// overwritten while a send still reads it). Ranges are tracked per space as a map of intervals.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "algo/schedule.hpp"

namespace hetccl::algo {

class DepTracker {
 public:
  /// Records that `step` reads [at, at+bytes) and appends the steps it must wait for to `deps`.
  void read(Location at, uint64_t bytes, uint32_t step, std::vector<uint32_t>& deps);
  /// Records that `step` writes (or reads and writes) [at, at+bytes); appends its dependencies.
  void write(Location at, uint64_t bytes, uint32_t step, std::vector<uint32_t>& deps);

 private:
  struct Interval {
    uint64_t end = 0;
    int64_t lastWriter = -1;
    std::vector<uint32_t> readers;  ///< since the last write
  };
  using Map = std::map<uint64_t, Interval>;

  template <typename Visit>
  void forEach(Location at, uint64_t bytes, Visit visit);
  void splitAt(Map& m, uint64_t x);

  Map spaces_[2];  ///< indexed by Location::Space
};

}  // namespace hetccl::algo
