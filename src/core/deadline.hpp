// Deadlines: every blocking wait in hetccl takes one.
#pragma once

#include <chrono>
#include <cstdint>

namespace hetccl {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  /// A deadline `ms` milliseconds from now.
  static Deadline afterMs(int64_t ms) { return Deadline(Clock::now() + std::chrono::milliseconds(ms)); }
  /// The default deadline for one blocking operation: now + HETCCL_TIMEOUT.
  static Deadline fromConfig();

  explicit Deadline(Clock::time_point at) : at_(at) {}
  bool expired() const { return Clock::now() >= at_; }
  /// Milliseconds left, clamped to [0, INT32_MAX] (handy for poll()).
  int remainingMs() const;
  Clock::time_point at() const { return at_; }
  /// The earlier of two deadlines.
  Deadline min(const Deadline& o) const { return at_ < o.at_ ? *this : o; }

 private:
  Clock::time_point at_;
};

}  // namespace hetccl
