// How the staged device path (device_path.hpp) cuts a group into pieces that pipeline: while the host
// engine exchanges one piece over the network, the user's stream copies the next piece's inputs into
// pinned memory and the previous piece's outputs back, on the copy engines. Pure arithmetic (no device
// calls), so it is unit-tested on any machine.
//
// A group of one all-reduce, broadcast or reduce larger than `pieceBytes` becomes one such operation per
// contiguous element range of at most `pieceBytes` (every rank cuts alike: the count, the type and
// HETCCL_STAGED_PIECE_BYTES agree across ranks). Other groups (several operations, gathers, scatters,
// all-to-all, send/recv) stay one piece. With pipelining on, a piece's out-of-place all-reduce or broadcast
// is staged in place: its input is copied straight into the host buffer of its output and the host engine
// runs it in place (no input buffer on the host, no host-side copy from input to output).
// pieceBytes == 0 is the unpipelined path: the whole group, staged as StagingPlan::build plans it.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "algo/coll_op.hpp"
#include "exec/staged/staging_plan.hpp"

namespace hetccl {

struct StagedPiece {
  std::vector<algo::CollOp> ops;  ///< device pointers (of this piece's ranges); what runs, once translated
  StagingPlan plan;               ///< where they live in the piece's staging slot
};

/// The pieces of `ops` for `rank` of `nranks`, in the order every rank runs them.
std::vector<StagedPiece> cutIntoPieces(std::span<const algo::CollOp> ops, int rank, int nranks, size_t pieceBytes);

}  // namespace hetccl
