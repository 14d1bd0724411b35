#include "transport/base/integrity.hpp"

#include "core/config.hpp"

namespace hetccl::transport {
namespace {
std::atomic<int> corruptionsArmed{0};
}

bool checksumsEnabled() { return config().boolean("HETCCL_CHECKSUM"); }

namespace testing {

void corruptNextPieces(int pieces) noexcept { corruptionsArmed.store(pieces, std::memory_order_release); }

bool takeCorruption() noexcept {
  if (corruptionsArmed.load(std::memory_order_relaxed) <= 0) return false;  // the usual case: one load
  int left = corruptionsArmed.load(std::memory_order_acquire);
  while (left > 0)
    if (corruptionsArmed.compare_exchange_weak(left, left - 1, std::memory_order_acq_rel)) return true;
  return false;
}

}  // namespace testing
}  // namespace hetccl::transport
