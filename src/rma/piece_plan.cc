#include "rma/piece_plan.hpp"

#include <algorithm>

namespace hetccl::rma {

std::vector<Range> mergeRanges(const std::vector<Range>& ranges) {
  std::vector<Range> out;
  out.reserve(ranges.size());
  for (const Range& r : ranges) {
    if (r.bytes == 0) continue;
    if (!out.empty()) {
      Range& last = out.back();
      if (last.local + last.bytes == r.local && last.remote + last.bytes == r.remote) {
        last.bytes += r.bytes;
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

std::vector<Piece> planPieces(const std::vector<uint64_t>& sizes, uint64_t pieceMax, uint64_t packMax) {
  packMax = std::min(packMax, pieceMax);
  std::vector<Piece> out;
  Piece pack;
  auto flush = [&] {
    if (pack.bytes > 0) out.push_back(pack);
    pack = Piece{};
  };
  for (uint32_t i = 0; i < sizes.size(); ++i) {
    const uint64_t n = sizes[i];
    if (n == 0) continue;
    if (n > packMax) {
      flush();
      for (uint64_t off = 0; off < n; off += pieceMax) out.push_back({i, i + 1, off, std::min(pieceMax, n - off), false});
      continue;
    }
    if (pack.bytes + n > pieceMax) flush();
    if (pack.bytes == 0) pack = {i, i, 0, 0, true};
    pack.last = i + 1;
    pack.bytes += n;
  }
  flush();
  return out;
}

}  // namespace hetccl::rma
