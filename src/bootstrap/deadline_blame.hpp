// Whom a bootstrap wait names when it reaches its deadline without the awaited message.
//
// Every rank hears every peer at least once per heartbeat period P (mesh_liveness.cc), so a member quiet
// for several periods is stopped, hung or cut off, while the others are only late by scheduling jitter. At
// a recv() deadline the awaited rank is named unless another member has been quiet longer than it, for at
// least `silentMs` (3 P): the awaited rank is most likely waiting for that one (a rank cut off in the
// middle of init while the rendezvous' other ranks wait for each other). Comparing the two silences, not
// only testing the awaited one against a threshold, keeps a loaded machine's heartbeat delays on the
// awaited rank from turning a clear culprit into the wrong name.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace hetccl::bootstrap {

/// One member's silence at the deadline: who, and how long since anything arrived from it (ms).
struct MemberSilence {
  int rank;
  int64_t silentMs;
};

/// Among `others` (the wait's members but this rank and the awaited one, with live connections), the one
/// to blame instead of the awaited rank, quiet for `awaitedSilentMs`: the quietest member, when it has
/// been quiet at least `silentMs` and longer than the awaited rank. None: blame the awaited rank.
std::optional<MemberSilence> blameInstead(int64_t awaitedSilentMs, const std::vector<MemberSilence>& others,
                                          int64_t silentMs);

}  // namespace hetccl::bootstrap
