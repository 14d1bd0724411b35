// The call stamps of one group: which stamp every message of a schedule carries (and every receive
// expects), so a receiver can tell a message of another call from the one it waits for.
//
// Stamps (transport/base/call_stamp.hpp) are filled in as follows:
//  * Messages of the group's collectives (the planner puts them first on every connection): kind, type,
//    operator and root of the collective (kCallKindGroup / none where the group holds several that
//    differ), seq = the number of groups with a collective this communicator has run (every rank calls
//    every collective, so every rank counts alike), bytes = sum of count x element size over the group's
//    collectives except AllToAllv (whose per-rank counts legitimately differ), piece = the message's
//    position among the collective messages of this group on its connection.
//  * Messages of send/recv operations (after the collectives, in call order): kind Send on both sides,
//    the operation's type, seq = the number of sends to (receives from) that peer so far, counted per
//    operation and not per group (so ranks may group their point-to-point calls differently), bytes =
//    count x element size, piece = the chunk's number within the operation.
// A message left over from an earlier call therefore carries another seq (or kind) than the receive
// that finds it, and is an error instead of data.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "algo/coll_op.hpp"
#include "algo/schedule.hpp"
#include "algo/tuning.hpp"
#include "transport/base/call_stamp.hpp"

namespace hetccl::engine {

/// A communicator's call counters (the stamps' sequence numbers).
struct CallSequence {
  uint64_t collectives = 0;     ///< groups with at least one collective
  std::vector<uint64_t> sends;  ///< per peer: Send operations to it
  std::vector<uint64_t> recvs;  ///< per peer: Recv operations from it
};

/// One stamp per step of `schedule` (planned from `group` for `rank` with `tuning`); steps that are not
/// sends or receives get a default stamp. Advances `seq` by this group. Throws InternalError when the
/// schedule's messages do not fit the group (a planner bug).
std::vector<transport::CallStamp> stampGroup(const algo::Schedule& schedule, std::span<const algo::CollOp> group,
                                             int rank, const algo::Tuning& tuning, CallSequence& seq);

}  // namespace hetccl::engine
