// The latency path (src/exec/pipeline/ll_path.hpp) on the simulated GPU, which runs the protocol's own code
// (src/device/gpu/ll_protocol.cuh) as each rank's kernel on a thread of its own: small all-reduces of every
// type and operator exact on 2, 3 and 4 ranks (every rank the same bits: the reference is reduced in rank
// order as the kernels do), in and out of place; larger ones, other collectives, forced algorithms and ranks
// that share a GPU take the stream pipeline; captured calls replayed between eager calls (the sequence number lives on the
// device); ranks whose counts differ get an error naming both calls, on both ranks; a peer that never
// comes or an abort releases the kernel. Removing either wait of the protocol fails these tests
// (scripts/mutate-stream-waits.sh). Cost: about 10 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "bootstrap_harness.hpp"
#include "sim_gpu.hpp"
#include "sim_world.hpp"
#include "stream_test_support.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::CollKind;
using bootstrap::testing::ScopedEnv;
using test::CollCase;
using test::CollCaseRounds;
using test::Layout;
using test::SimWorld;

class LatencyPathTest : public test::SmallRingTest {
 private:
  ScopedEnv ll_{"HETCCL_GPU_LL_BYTES", "4096"};  // SmallRingTest turns it off
};

uint64_t latencyCalls(SimWorld& world, int r) { return world.exec(r).traffic().latencyPathCalls; }
uint64_t ringBytes(SimWorld& world, int r) {
  uint64_t sum = 0;
  for (uint64_t b : world.exec(r).traffic().ringSent) sum += b;
  return sum;
}

TEST_F(LatencyPathTest, SmallAllReducesOfEveryTypeAndOperatorAreExact) {
  for (const Layout& layout : {Layout{"1+1", {0, 1}}, Layout{"2+1", {0, 0, 1}}, Layout{"2+2", {0, 0, 1, 1}}}) {
    SimWorld world(layout);
    ASSERT_EQ(world.exec(0).latencyPathBytes(), 4096u);
    uint64_t calls = 0;
    for (DataType type : {DataType::Int8, DataType::Uint8, DataType::Int32, DataType::Uint32, DataType::Int64,
                          DataType::Uint64, DataType::Float16, DataType::Float32, DataType::Float64,
                          DataType::Bfloat16})
      for (RedOpKind op : {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min, RedOpKind::Avg})
        for (size_t count : {size_t{1}, size_t{7}, 4096 / dataTypeSize(type)}) {  // one line, a tail, the limit
          CollCase c;
          c.kind = CollKind::AllReduce;
          c.count = count;
          c.type = type;
          c.op = op;
          c.inPlace = count == 7;
          c.round = static_cast<int>(calls);
          EXPECT_EQ(world.run(c), "") << layout.name << ": " << c.describe();
          ++calls;
        }
    for (int r = 0; r < world.size(); ++r) {
      EXPECT_EQ(latencyCalls(world, r), calls) << "rank " << r;
      EXPECT_EQ(ringBytes(world, r), 0u) << "rank " << r << ": small all-reduces went through the rings";
    }
  }
}

TEST_F(LatencyPathTest, OtherCallsTakeTheStreamPipeline) {
  SimWorld world({"1+1", {0, 1}});
  CollCase big;  // one element beyond the limit
  big.count = 4096 / 4 + 1;
  EXPECT_EQ(world.run(big), "");
  CollCase premul;  // a per-rank scalar: not on the latency path
  premul.count = 10;
  premul.op = RedOpKind::PreMulSum;
  EXPECT_EQ(world.run(premul), "");
  CollCase gather;
  gather.kind = CollKind::AllGather;
  gather.count = 10;
  EXPECT_EQ(world.run(gather), "");
  EXPECT_EQ(latencyCalls(world, 0), 0u);
  EXPECT_GT(ringBytes(world, 0), 0u);
}

TEST_F(LatencyPathTest, AForcedAlgorithmTurnsItOff) {
  ScopedEnv force("HETCCL_ALGO", "ring");
  SimWorld world({"1+1", {0, 1}});
  EXPECT_EQ(world.exec(0).latencyPathBytes(), 0u);
  CollCase c;
  c.count = 10;
  EXPECT_EQ(world.run(c), "");
  EXPECT_EQ(latencyCalls(world, 0), 0u);
}

TEST_F(LatencyPathTest, RanksThatShareAGpuDoNotTakeIt) {
  test::sim::setDeviceBusId("0000:3b:00.0");  // every rank reports the same GPU
  SimWorld world({"1+1", {0, 1}});
  test::sim::setDeviceBusId("");
  EXPECT_EQ(world.exec(0).latencyPathBytes(), 0u);
  CollCase c;
  c.count = 10;
  EXPECT_EQ(world.run(c), "");
  EXPECT_EQ(latencyCalls(world, 0), 0u);
}

// Eager calls advance the device-side sequence number between replays: a replay that baked in the host's
// number would wait for words its peers never write.
TEST_F(LatencyPathTest, ReplaysBetweenEagerCallsAreExact) {
  SimWorld world({"2+1", {0, 0, 1}});
  CollCase c;
  c.layout = world.layout();
  c.count = 300;
  c.type = DataType::Int32;
  CollCaseRounds rounds(c);
  std::vector<test::sim::Graph*> graphs;
  for (int r = 0; r < world.size(); ++r) {
    test::sim::beginCapture(world.userStream(r));
    world.exec(r).enqueue(rounds.group(r), world.userStream(r));
    graphs.push_back(test::sim::endCapture(world.userStream(r)));
  }
  EXPECT_EQ(test::sim::pendingOps(), 0u) << "the capture ran something";
  for (int round = 1; round <= 5; ++round) {
    rounds.refill(round);
    for (int r = 0; r < world.size(); ++r) test::sim::launch(graphs[r], world.userStream(r));
    for (int r = 0; r < world.size(); ++r) test::sim::plugin().streamSynchronize(world.userStream(r));
    ASSERT_EQ(rounds.check(), "") << "replay " << round;
    for (int eager = 0; eager < round; ++eager) {  // 1, 2, ... calls between replays: both parities
      CollCase e;
      e.count = 5 + eager;
      e.op = RedOpKind::Max;
      e.round = round * 10 + eager;
      ASSERT_EQ(world.run(e), "") << "eager call " << eager << " after replay " << round;
    }
  }
  for (int r = 0; r < world.size(); ++r) {
    EXPECT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
    EXPECT_EQ(latencyCalls(world, r), 1u + 15u);  // the capture and the eager calls (replays are not queued)
  }
}

// Rank `r` queues an all-reduce of `counts[r]` floats (none: no call) on its user stream; returns when the
// device is idle again.
void callWithCounts(SimWorld& world, const std::vector<size_t>& counts) {
  const size_t most = *std::max_element(counts.begin(), counts.end());
  std::vector<std::vector<float>> bufs(world.size(), std::vector<float>(std::max<size_t>(most, 1024), 1.0f));
  for (int r = 0; r < world.size(); ++r) {
    if (counts[r] == 0) continue;
    algo::CollOp op;
    op.sendbuff = op.recvbuff = bufs[r].data();
    op.count = counts[r];
    world.exec(r).enqueue({&op, 1}, world.userStream(r));
  }
  EXPECT_TRUE(test::waitUntil([] { return test::sim::pendingOps() == 0; }, std::chrono::seconds(20)))
      << "a kernel was not released\n" << test::sim::dump();
}

TEST_F(LatencyPathTest, RanksWhoseCountsDifferGetAnErrorNamingBothCallsOnBothRanks) {
  SimWorld world({"1+1", {0, 1}});
  callWithCounts(world, {16, 17});
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(test::waitUntil([&] { return !world.failuresOf(r).empty(); })) << "rank " << r << " reported nothing";
    const std::string report = world.failuresOf(r).front();
    EXPECT_NE(report.find("disagree"), std::string::npos) << report;
    EXPECT_NE(report.find("64 bytes"), std::string::npos) << report;
    EXPECT_NE(report.find("68 bytes"), std::string::npos) << report;
  }
}

// Counts that straddle the limit: rank 0's call (4096 bytes) takes the latency path, rank 1's (4100) the
// stream pipeline. Neither can progress; at the deadline both name the disagreement, not just a timeout.
TEST_F(LatencyPathTest, ACallTakingTheLatencyPathOnOneRankAndThePipelineOnAnotherIsNamedOnBoth) {
  ScopedEnv shortTimeout("HETCCL_TIMEOUT", "1");
  SimWorld world({"1+1", {0, 1}});
  callWithCounts(world, {1024, 1025});
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(world.failuresOf(r).size(), 1u) << "rank " << r;
    const std::string report = world.failuresOf(r).front();
    EXPECT_NE(report.find("disagree"), std::string::npos) << report;
    EXPECT_NE(report.find("on the latency path"), std::string::npos) << report;
    EXPECT_NE(report.find("stream pipeline"), std::string::npos) << report;
    EXPECT_NE(report.find("4096 bytes"), std::string::npos) << report;  // both calls, named on both ranks
    EXPECT_NE(report.find("4100 bytes"), std::string::npos) << report;
    EXPECT_NE(report.find("HETCCL_GPU_LL_BYTES = 4096"), std::string::npos) << report;
  }
}

TEST_F(LatencyPathTest, APeerThatNeverCallsTimesOutAndReleasesTheKernel) {
  ScopedEnv shortTimeout("HETCCL_TIMEOUT", "1");
  SimWorld world({"2+1", {0, 0, 1}});
  callWithCounts(world, {8, 8, 0});
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(world.failuresOf(r).size(), 1u) << "rank " << r;
    EXPECT_NE(world.failuresOf(r).front().find("HETCCL_TIMEOUT"), std::string::npos) << world.failuresOf(r).front();
  }
}

TEST_F(LatencyPathTest, AbortReleasesTheKernel) {
  SimWorld world({"1+1", {0, 1}});
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the kernel is polling for rank 1
    world.aborted(0) = true;
  });
  callWithCounts(world, {8, 0});
  aborter.join();
  // The report comes from the executor's thread once the released kernel's stream drained: after the
  // kernel is gone, not with it (under TSan the check right after callWithCounts found none, 1 run in 1).
  ASSERT_TRUE(test::waitUntil([&] { return !world.failuresOf(0).empty(); })) << "rank 0 reported nothing";
  ASSERT_EQ(world.failuresOf(0).size(), 1u);
  EXPECT_NE(world.failuresOf(0).front().find("aborted"), std::string::npos) << world.failuresOf(0).front();
}

}  // namespace
}  // namespace hetccl::stream_exec
