#include "bootstrap/root_cause.hpp"

#include <chrono>
#include <optional>
#include <thread>

#include "core/deadline.hpp"

namespace hetccl::bootstrap {

PeerError rootCause(const Bootstrap& boot, const PeerError& seen, const std::atomic<bool>* abortFlag) {
  const auto until = Clock::now() + std::chrono::milliseconds(300);
  auto aborted = [&] { return abortFlag && abortFlag->load(); };
  std::optional<PeerError> first = boot.firstFailureInJob();
  while (!first && !aborted() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    first = boot.firstFailureInJob();
  }
  if (!first || first->peer() == seen.peer()) return seen;
  return PeerError(first->peer(), first->host(), concat(first->what(), " (seen here as: ", seen.what(), ")"));
}

}  // namespace hetccl::bootstrap
