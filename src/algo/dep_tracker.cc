#include "algo/dep_tracker.hpp"

#include <iterator>

namespace hetccl::algo {

void DepTracker::splitAt(Map& m, uint64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && x < it->second.end) {
    Interval tail = it->second;
    it->second.end = x;
    m.emplace(x, std::move(tail));
  }
}

template <typename Visit>
void DepTracker::forEach(Location at, uint64_t bytes, Visit visit) {
  if (bytes == 0) return;
  Map& m = spaces_[static_cast<int>(at.space)];
  const uint64_t lo = at.addr, hi = at.addr + bytes;
  splitAt(m, lo);
  splitAt(m, hi);
  uint64_t cur = lo;
  auto it = m.lower_bound(lo);
  while (cur < hi) {
    if (it != m.end() && it->first == cur) {
      visit(it->second);
      cur = it->second.end;
      ++it;
    } else {  // a gap never touched before: start tracking it
      uint64_t gapEnd = (it != m.end() && it->first < hi) ? it->first : hi;
      auto inserted = m.emplace_hint(it, cur, Interval{gapEnd, -1, {}});
      visit(inserted->second);
      cur = gapEnd;
      it = std::next(inserted);
    }
  }
}

void DepTracker::read(Location at, uint64_t bytes, uint32_t step, std::vector<uint32_t>& deps) {
  forEach(at, bytes, [&](Interval& iv) {
    if (iv.lastWriter >= 0 && iv.lastWriter != step) deps.push_back(static_cast<uint32_t>(iv.lastWriter));
    if (iv.readers.empty() || iv.readers.back() != step) iv.readers.push_back(step);
  });
}

void DepTracker::write(Location at, uint64_t bytes, uint32_t step, std::vector<uint32_t>& deps) {
  forEach(at, bytes, [&](Interval& iv) {
    if (iv.lastWriter >= 0 && iv.lastWriter != step) deps.push_back(static_cast<uint32_t>(iv.lastWriter));
    for (uint32_t r : iv.readers)
      if (r != step) deps.push_back(r);
    iv.readers.clear();
    iv.lastWriter = step;
  });
}

}  // namespace hetccl::algo
