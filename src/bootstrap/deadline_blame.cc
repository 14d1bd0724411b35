#include "bootstrap/deadline_blame.hpp"

namespace hetccl::bootstrap {

std::optional<MemberSilence> blameInstead(int64_t awaitedSilentMs, const std::vector<MemberSilence>& others,
                                          int64_t silentMs) {
  std::optional<MemberSilence> quietest;
  for (const MemberSilence& m : others)
    if (!quietest || m.silentMs > quietest->silentMs) quietest = m;
  if (!quietest || quietest->silentMs < silentMs || quietest->silentMs <= awaitedSilentMs) return std::nullopt;
  return quietest;
}

}  // namespace hetccl::bootstrap
