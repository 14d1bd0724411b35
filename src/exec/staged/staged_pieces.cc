#include "exec/staged/staged_pieces.hpp"

#include <algorithm>
#include <cstdint>

#include "core/types.hpp"

namespace hetccl {
namespace {

using algo::CollKind;
using algo::CollOp;

bool cuttable(CollKind k) { return k == CollKind::AllReduce || k == CollKind::Broadcast || k == CollKind::Reduce; }

/// An out-of-place all-reduce or broadcast whose input and output do not overlap: staged in place.
bool stagesInPlace(const CollOp& op, size_t bytes) {
  if (op.kind != CollKind::AllReduce && op.kind != CollKind::Broadcast) return false;
  if (!op.sendbuff || !op.recvbuff || op.sendbuff == op.recvbuff || bytes == 0) return false;
  const auto s = reinterpret_cast<uintptr_t>(op.sendbuff), r = reinterpret_cast<uintptr_t>(op.recvbuff);
  return s + bytes <= r || r + bytes <= s;
}

/// One piece of a pipelined group: `op` staged, in place where stagesInPlace() allows.
StagedPiece stage(CollOp op, int rank, int nranks) {
  const size_t bytes = op.count * dataTypeSize(op.type);
  const void* input = op.sendbuff;
  const bool inPlace = stagesInPlace(op, bytes);
  if (inPlace) op.sendbuff = op.recvbuff;
  StagedPiece p{{op}, StagingPlan::build({&op, 1}, rank, nranks)};
  if (inPlace)
    for (StagingRegion& r : p.plan.regions)
      if (r.copyIn && r.device == reinterpret_cast<uintptr_t>(op.recvbuff)) r.source = reinterpret_cast<uintptr_t>(input);
  return p;
}

}  // namespace

std::vector<StagedPiece> cutIntoPieces(std::span<const CollOp> ops, int rank, int nranks, size_t pieceBytes) {
  std::vector<StagedPiece> pieces;
  if (pieceBytes == 0 || ops.size() != 1) {
    pieces.push_back({{ops.begin(), ops.end()}, StagingPlan::build(ops, rank, nranks)});
    return pieces;
  }
  const CollOp& op = ops[0];
  const size_t es = dataTypeSize(op.type);
  if (!cuttable(op.kind) || op.count * es <= pieceBytes) {
    pieces.push_back(stage(op, rank, nranks));
    return pieces;
  }
  const size_t per = std::max<size_t>(1, pieceBytes / es);
  for (size_t first = 0; first < op.count; first += per) {
    CollOp part = op;
    part.count = std::min(per, op.count - first);
    const size_t at = first * es;
    if (part.sendbuff) part.sendbuff = static_cast<const char*>(op.sendbuff) + at;
    if (part.recvbuff) part.recvbuff = static_cast<char*>(op.recvbuff) + at;
    pieces.push_back(stage(std::move(part), rank, nranks));
  }
  return pieces;
}

}  // namespace hetccl
