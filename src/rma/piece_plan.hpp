// How a transfer's data is cut into transport messages ("pieces"), derived identically on both sides
// from the ranges' sizes and two limits the initiator puts in the header:
//   - a range larger than packMax is sent from (and received into) place, in pieces of at most pieceMax;
//   - consecutive ranges of at most packMax are packed into one piece of at most pieceMax (copied into
//     staging by the sender, scattered by the receiver), so hundreds of small KV blocks become a few
//     messages.
// mergeRanges() first joins ranges that continue each other on both sides.
#pragma once

#include <cstdint>
#include <vector>

namespace hetccl::rma {

/// One range of a transfer: local offset, remote offset, bytes.
struct Range {
  uint64_t local = 0;
  uint64_t remote = 0;
  uint64_t bytes = 0;
};

/// Ranges [first, last) packed, or part [offset, offset + bytes) of range `first` (packed == false).
struct Piece {
  uint32_t first = 0;
  uint32_t last = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  bool packed = false;
};

/// Drops empty ranges and merges each range into the previous one when both its ends continue it.
std::vector<Range> mergeRanges(const std::vector<Range>& ranges);

/// The pieces of ranges of sizes `sizes` (see the top of this file). pieceMax >= 1.
std::vector<Piece> planPieces(const std::vector<uint64_t>& sizes, uint64_t pieceMax, uint64_t packMax);

}  // namespace hetccl::rma
