#include "exec/host/idle_spin.hpp"

#include <sched.h>

#include <thread>

namespace hetccl::engine {

std::chrono::microseconds chooseIdleSpin(int ranksOnHost, int usableCores, const std::vector<std::string_view>& transports) {
  if (ranksOnHost > usableCores) return kShortIdleSpin;
  for (std::string_view t : transports)
    if (t != "self" && t != "none" && t != "shm" && t != "mem") return kShortIdleSpin;
  return kLongIdleSpin;
}

int usableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace hetccl::engine
