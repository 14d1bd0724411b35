// HETCCL_CHECK_CALLS=1: before running a group, every rank compares a short description of its
// collectives with every other rank's (one bootstrap all-gather per group with a collective — a debugging aid, off by
// default). Disagreeing calls (other counts, types, operators, roots, or another collective) become an
// InvalidUsage on every rank naming both sides, instead of corrupt data or a timeout.
#pragma once

#include <span>

#include "algo/coll_op.hpp"
#include "bootstrap/bootstrap.hpp"

namespace hetccl {

/// True when `ops` holds a collective (not only Send/Recv): only such groups are compared, since every
/// rank makes every collective call; a group of sends and receives involves only some ranks (its
/// messages' call stamps check it per pair).
bool hasCollective(std::span<const algo::CollOp> ops);

/// Collective over `boot`. Send/Recv are not compared (their counts legitimately differ per peer).
void checkCallsAgree(bootstrap::Bootstrap& boot, std::span<const algo::CollOp> ops);

}  // namespace hetccl
