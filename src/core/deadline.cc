#include "core/deadline.hpp"

#include <algorithm>
#include <climits>

#include "core/config.hpp"

namespace hetccl {

Deadline Deadline::fromConfig() { return afterMs(config().timeoutMs()); }

int Deadline::remainingMs() const {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

}  // namespace hetccl
