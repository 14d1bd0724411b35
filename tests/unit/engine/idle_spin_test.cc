// engine::chooseIdleSpin: the host executor polls long only where every rank has a core and no transport
// thread needs one. Cost: microseconds.
#include <gtest/gtest.h>

#include <thread>

#include "exec/host/idle_spin.hpp"

namespace hetccl::test {
namespace {

using engine::chooseIdleSpin;
using engine::kLongIdleSpin;
using engine::kShortIdleSpin;

TEST(IdleSpin, LongWhenRanksHaveACoreEachAndPeersAreInSharedMemory) {
  EXPECT_EQ(chooseIdleSpin(8, 16, {"shm", "shm", "self", "shm"}), kLongIdleSpin);
  EXPECT_EQ(chooseIdleSpin(8, 8, {"self", "shm"}), kLongIdleSpin);  // exactly one core each
  EXPECT_EQ(chooseIdleSpin(1, 1, {"self"}), kLongIdleSpin);
  EXPECT_EQ(chooseIdleSpin(2, 2, {"self", "none", "mem"}), kLongIdleSpin);
}

TEST(IdleSpin, ShortWhenRanksOutnumberCores) {
  EXPECT_EQ(chooseIdleSpin(9, 8, {"self", "shm"}), kShortIdleSpin);
  EXPECT_EQ(chooseIdleSpin(4, 2, {"self", "shm", "shm", "shm"}), kShortIdleSpin);
}

TEST(IdleSpin, ShortWhenATransportThreadMovesTheBytes) {
  EXPECT_EQ(chooseIdleSpin(2, 16, {"self", "tcp"}), kShortIdleSpin);
  EXPECT_EQ(chooseIdleSpin(2, 16, {"shm", "self", "ucx"}), kShortIdleSpin);
}

TEST(IdleSpin, UsableCoresIsAtLeastOneAndAtMostTheMachinesThreads) {
  const int n = engine::usableCores();
  EXPECT_GE(n, 1);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(n, static_cast<int>(std::thread::hardware_concurrency()));
  }
}

}  // namespace
}  // namespace hetccl::test
