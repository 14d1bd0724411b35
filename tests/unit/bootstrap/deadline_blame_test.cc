// The rule that names a rank at a bootstrap wait's deadline (deadline_blame.hpp), on synthetic silences.
// Cost: microseconds.
#include "bootstrap/deadline_blame.hpp"

#include <gtest/gtest.h>

namespace hetccl::bootstrap {
namespace {

constexpr int64_t kSilentMs = 150;  // three heartbeat periods at HETCCL_TIMEOUT=1 s

TEST(DeadlineBlameTest, AwaitedRankIsNamedWhenNobodyElseIsQuiet) {
  EXPECT_FALSE(blameInstead(900, {{1, 20}, {3, 40}}, kSilentMs));
  EXPECT_FALSE(blameInstead(10, {{1, 20}, {3, 140}}, kSilentMs));  // jitter below three periods
  EXPECT_FALSE(blameInstead(10, {}, kSilentMs));
}

TEST(DeadlineBlameTest, QuietestMemberIsNamedWhenTheAwaitedRankIsAlive) {
  auto blamed = blameInstead(10, {{1, 850}, {3, 200}}, kSilentMs);
  ASSERT_TRUE(blamed);
  EXPECT_EQ(blamed->rank, 1);
  EXPECT_EQ(blamed->silentMs, 850);
}

// netns drop_init_mid: rank 1 cut off during init; rank 2 waits for rank 0, which waits for rank 1 and
// whose heartbeats come late on a loaded machine (quiet for 120 ms, more than two periods). Rank 1 has
// been quiet far longer: it is named.
TEST(DeadlineBlameTest, AwaitedRankLateByJitterDoesNotHideTheRankCutOff) {
  auto blamed = blameInstead(120, {{1, 850}}, kSilentMs);
  ASSERT_TRUE(blamed);
  EXPECT_EQ(blamed->rank, 1);
}

// The awaited rank itself stopped first: it stays named even though another member is quiet too.
TEST(DeadlineBlameTest, AwaitedRankQuietLongestIsNamed) {
  EXPECT_FALSE(blameInstead(900, {{1, 600}, {3, 20}}, kSilentMs));
  EXPECT_FALSE(blameInstead(600, {{1, 600}}, kSilentMs));  // a tie names the rank waited for
}

}  // namespace
}  // namespace hetccl::bootstrap
