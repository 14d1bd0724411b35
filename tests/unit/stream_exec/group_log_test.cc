// The GPU rings' group logs and piece tokens (gpu_ring.hpp, gpu_stamp.hpp): what a monitor names a mismatch
// with. Each end logs the stamp words of its last kGpuGroupLogEntries groups per ring; a token is looked up
// by its tag. Checked against stamps composed here, not against the code's own output. Cost: < 1 s.
#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "bootstrap_harness.hpp"
#include "bootstrap/unique_id.hpp"
#include "sim_gpu.hpp"
#include "exec/pipeline/gpu_ring.hpp"
#include "exec/pipeline/gpu_stamp.hpp"

namespace hetccl::stream_exec {
namespace {

constexpr uint64_t kWord0 = kStampMagic | uint64_t{1} << 32;  // an all-reduce of type 0, op 0

/// Runs `body` on rank 0's ring to rank 1 of a two-rank ring set (8 slots of 64 bytes).
void onARing(const std::function<void(const GpuRing&)>& body) {
  auto ranks = bootstrap::testing::joinAll(bootstrap::createUniqueId(), 2);
  for (auto& r : ranks) ASSERT_TRUE(r.bootstrap) << r.error;
  std::mutex mu;
  bootstrap::testing::onEveryRank(ranks, [&](int rank, bootstrap::Bootstrap& boot) {
    GpuRingSet set = GpuRingSet::build(boot, test::sim::plugin(), 8, 64);
    boot.barrier();
    if (rank == 0) {
      std::lock_guard<std::mutex> lock(mu);
      body(*set.out[1]);
    }
    boot.barrier();
  });
}

TEST(GpuRingGroupLog, TheLastGroupsAreNamedAndOlderOnesAreNot) {
  onARing([](const GpuRing& ring) {
    const uint64_t groups = kGpuGroupLogEntries + 36;
    for (uint64_t g = 1; g <= groups; ++g) ring.logGroup(GroupLog::Sent, kWord0, g, 1000 * g);
    for (uint64_t g = 1; g <= groups; ++g) {
      const uint64_t words[4] = {kWord0, g, 1000 * g, 70001};
      const uint64_t token = pieceToken(words, 5);
      uint64_t found[4] = {};
      const bool kept = g > groups - kGpuGroupLogEntries;
      ASSERT_EQ(ring.findGroup(GroupLog::Sent, token, found), kept) << "group " << g;
      if (kept) {
        EXPECT_EQ(found[0], kWord0);
        EXPECT_EQ(found[1], g);
        EXPECT_EQ(found[2], 1000 * g);
        EXPECT_EQ(found[3], 70001u % 65536) << "the token keeps the piece number modulo 2^16";
      }
      EXPECT_FALSE(ring.findGroup(GroupLog::Expected, token, found)) << "the other end's log is separate";
    }
  });
}

TEST(GpuRingGroupLog, AnUnloggedTokenIsDescribedAsSuch) {
  const uint64_t words[4] = {kWord0, 7, 4096, 3};
  uint64_t unlogged[4];
  unloggedStamp(pieceToken(words, 2), unlogged);
  const std::string text = describeStamp(unlogged);
  EXPECT_NE(text.find("piece 3 (modulo 65536) of a group no longer in the ring's group log (token 0x"), std::string::npos)
      << text;
}

TEST(GpuRingGroupLog, TokensOfDifferentPiecesSlotsAndGroupsDiffer) {
  std::set<uint64_t> tokens;
  size_t made = 0;
  for (uint64_t g = 1; g <= 20; ++g)
    for (uint64_t bytes : {uint64_t{4096}, uint64_t{4100}})
      for (uint64_t k = 0; k < 8; ++k) {
        const uint64_t words[4] = {kWord0, g, bytes, k};
        const uint64_t token = pieceToken(words, static_cast<uint32_t>(k % 4));
        EXPECT_NE(token, kSlotEmpty);
        EXPECT_EQ(tokenSlot(token), k % 4);
        tokens.insert(token);
        ++made;
      }
  EXPECT_EQ(tokens.size(), made);
  const uint64_t top[4] = {kWord0, 1, 4096, 0};
  EXPECT_EQ(tokenSlot(pieceToken(top, kMaxTokenSlots - 1)), kMaxTokenSlots - 1);
}

}  // namespace
}  // namespace hetccl::stream_exec
