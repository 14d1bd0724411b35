// Device collectives captured into CUDA graphs, on the simulated GPU (sim_gpu.hpp models capture and
// replay as CUDA does): every collective replayed five times with fresh inputs, interleaved with eager
// calls and other graphs, exact every time; a replay that a peer never joins times out (the monitor sees
// replays it did not queue) or is released by an abort. And the call stamps of the GPU rings: ranks that
// disagree on a count get an error on both ranks naming both stamps, nothing left waiting.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bootstrap_harness.hpp"
#include "sim_gpu.hpp"
#include "sim_world.hpp"
#include "stream_test_support.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::CollKind;
using bootstrap::testing::ScopedEnv;
using test::CollCase;
using test::CollCaseRounds;
using test::Layout;
using test::SimWorld;

class GraphTest : public test::SmallRingTest {
 protected:
  GraphTest() : SmallRingTest("3") {}  // not a power of two: ring bases round up to multiples of 3
};

/// Captures every rank's group of `c` into a graph of its own (per rank, on its user stream).
std::vector<test::sim::Graph*> capture(SimWorld& world, const CollCaseRounds& c) {
  std::vector<test::sim::Graph*> graphs;
  for (int r = 0; r < world.size(); ++r) {
    test::sim::beginCapture(world.userStream(r));
    world.exec(r).enqueue(c.group(r), world.userStream(r));
    graphs.push_back(test::sim::endCapture(world.userStream(r)));
  }
  return graphs;
}

void synchronize(SimWorld& world) {
  for (int r = 0; r < world.size(); ++r) test::sim::plugin().streamSynchronize(world.userStream(r));
}

using test::waitUntil;

// The defect of issue 11: right on the first replay, then each rank got the peer's previous input.
TEST_F(GraphTest, AnAllReduceReplayedFiveTimesIsExactEveryTime) {
  SimWorld world({"2", {0, 1}});
  CollCase c;
  c.layout = world.layout();
  c.count = 40'001;
  CollCaseRounds rounds(c);
  auto graphs = capture(world, rounds);
  for (int round = 1; round <= 5; ++round) {
    rounds.refill(round);
    for (int r = 0; r < 2; ++r) test::sim::launch(graphs[r], world.userStream(r));
    synchronize(world);
    ASSERT_EQ(rounds.check(), "") << "replay " << round;
  }
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
}

TEST_F(GraphTest, ACapturedGroupIsNotWorkInFlight) {
  ScopedEnv shortTimeout("HETCCL_TIMEOUT", "1");
  SimWorld world({"2", {0, 1}});
  CollCase c;
  c.layout = world.layout();
  c.count = 1000;
  CollCaseRounds rounds(c);
  test::sim::beginCapture(world.userStream(0));
  world.exec(0).enqueue(rounds.group(0), world.userStream(0));
  test::sim::endCapture(world.userStream(0));
  const auto start = std::chrono::steady_clock::now();
  world.exec(0).drain();  // nothing eager queued: at once
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // longer than HETCCL_TIMEOUT
  EXPECT_TRUE(world.failuresOf(0).empty()) << world.failuresOf(0).front();
}

TEST_F(GraphTest, EveryCollectiveReplaysWithFreshInputsBetweenEagerCallsAndOtherGraphs) {
  for (const Layout& layout : {Layout{"2", {0, 1}}, Layout{"3", {0, 1, 2}}}) {
    SimWorld world(layout);
    const int n = world.size();
    std::vector<std::unique_ptr<CollCaseRounds>> cases;
    for (CollKind kind : test::kEveryKind) {
      CollCase c;
      c.layout = layout;
      c.kind = kind;
      c.count = 40'001;  // several pieces per message and more than one trip round the ring
      c.root = n - 1;
      cases.push_back(std::make_unique<CollCaseRounds>(c));
    }
    CollCase small;  // one piece per message
    small.layout = layout;
    small.count = 5;
    small.type = DataType::Int8;
    small.op = RedOpKind::Max;
    cases.push_back(std::make_unique<CollCaseRounds>(small));
    std::vector<std::vector<test::sim::Graph*>> graphs;
    for (const auto& c : cases) graphs.push_back(capture(world, *c));
    EXPECT_EQ(test::sim::pendingOps(), 0u) << "a capture ran something";

    for (int round = 1; round <= 5; ++round) {
      for (const auto& c : cases) c->refill(round);
      for (size_t g = 0; g < graphs.size(); ++g) {
        for (int r = 0; r < n; ++r) test::sim::launch(graphs[g][r], world.userStream(r));
        if (g == 2 || g == graphs.size() - 1) {  // eager calls between and after replays
          CollCase eager;
          eager.kind = round % 2 ? CollKind::AllReduce : CollKind::AllGather;
          eager.count = 20'000 + round;
          eager.round = round;
          ASSERT_EQ(world.run(eager), "") << layout.name << " round " << round << ": eager " << eager.describe();
        }
      }
      synchronize(world);
      for (const auto& c : cases)
        EXPECT_EQ(c->check(), "") << layout.name << " replay " << round << ": " << c->collCase().describe();
      for (int r = 0; r < n; ++r) ASSERT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
    }
  }
}

// Many slots let a receiver copy pieces into its landing buffers far ahead of the reductions that read
// them, and a sender fill slot after slot ahead of its receiver: only the waits keep them apart.
TEST_F(GraphTest, ManySlotsAndLongMessagesReplayExactly) {
  ScopedEnv slots("HETCCL_GPU_SLOTS", "16");
  ScopedEnv pieces("HETCCL_GPU_MIN_CHUNK_BYTES", "65536");
  ScopedEnv ring("HETCCL_GPU_PAIR_EXCHANGE_BYTES", "0");  // reduce-scatter + all-gather: pieces reduced on arrival
  SimWorld world({"2", {0, 1}});
  CollCase c;
  c.layout = world.layout();
  c.count = 48 * 16384 + 5;  // 25 pieces of 64 KiB each way, more than the slots and the landing buffers
  CollCaseRounds rounds(c);
  auto graphs = capture(world, rounds);
  for (int round = 1; round <= 3; ++round) {
    rounds.refill(round);
    for (int r = 0; r < 2; ++r) test::sim::launch(graphs[r], world.userStream(r));
    synchronize(world);
    ASSERT_EQ(rounds.check(), "") << "replay " << round;
    c.round = round;
    ASSERT_EQ(world.run(c), "") << "eager " << round;
  }
}

TEST_F(GraphTest, TwoCapturesOfOneCommunicatorAtOnceAreRefused) {
  SimWorld world({"2", {0, 1}});
  CollCase c;
  c.layout = world.layout();
  c.count = 100;
  CollCaseRounds rounds(c);
  void* other = nullptr;
  test::sim::plugin().streamCreate(&other);
  test::sim::beginCapture(world.userStream(0));
  world.exec(0).enqueue(rounds.group(0), world.userStream(0));
  test::sim::beginCapture(other);
  EXPECT_THROW(world.exec(0).enqueue(rounds.group(0), other), InvalidUsage);
  test::sim::endCapture(other);
  test::sim::endCapture(world.userStream(0));
  EXPECT_TRUE(world.failuresOf(0).empty());  // refused before anything was queued: still usable
  test::sim::plugin().streamDestroy(other);
}

/// After an eager call (so that the host knows of nothing in flight), rank 0 replays an all-reduce its
/// peer never joins; `fail` makes it fail. Returns rank 0's reports.
std::vector<std::string> replayAlone(SimWorld& world, const std::function<void()>& fail) {
  CollCase c;
  c.layout = world.layout();
  c.count = 100'000;
  CollCaseRounds rounds(c);
  auto graphs = capture(world, rounds);
  CollCase eager;
  eager.count = 1000;
  EXPECT_EQ(world.run(eager), "");
  test::sim::launch(graphs[0], world.userStream(0));
  fail();
  EXPECT_TRUE(waitUntil([] { return test::sim::pendingOps() == 0; })) << "the replay was not released\n"
                                                                      << test::sim::dump();
  return world.failuresOf(0);
}

TEST_F(GraphTest, AReplayThatMakesNoProgressTimesOut) {
  ScopedEnv shortTimeout("HETCCL_TIMEOUT", "1");
  SimWorld world({"2", {0, 1}});
  auto reports = replayAlone(world, [] {});
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("HETCCL_TIMEOUT"), std::string::npos) << reports[0];
}

TEST_F(GraphTest, AbortReleasesAReplay) {
  SimWorld world({"2", {0, 1}});
  auto reports = replayAlone(world, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the replay is waiting for its peer
    world.aborted(0) = true;
  });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("aborted"), std::string::npos) << reports[0];
}

/// Every rank queues its own group of `kind` (rank r: count counts[r]); returns every rank's reports once
/// every rank has one (or after 10 s).
std::vector<std::vector<std::string>> disagree(SimWorld& world, CollKind kind, const std::vector<size_t>& counts) {
  std::vector<std::vector<float>> bufs(world.size());
  auto errors = test::runRanks(world.size(), [&](int r) {
    bufs[r].assign(4 * counts[r] * world.size(), 1.0f);
    algo::CollOp op;
    op.kind = kind;
    op.sendbuff = bufs[r].data();
    op.recvbuff = bufs[r].data();
    op.count = counts[r];
    world.exec(r).enqueue({&op, 1}, world.userStream(r));
    world.exec(r).drain();  // returns once done or released
  });
  test::rethrowFirst(errors);
  std::vector<std::vector<std::string>> reports(world.size());
  waitUntil([&] {
    for (int r = 0; r < world.size(); ++r)
      if ((reports[r] = world.failuresOf(r)).empty()) return false;
    return true;
  });
  EXPECT_TRUE(waitUntil([] { return test::sim::pendingOps() == 0; })) << "streams left waiting\n" << test::sim::dump();
  return reports;
}

TEST_F(GraphTest, MismatchedCountsFailOnBothRanksNamingBothStamps) {
  SimWorld world({"2", {0, 1}});
  auto reports = disagree(world, CollKind::AllReduce, {10'000, 20'000});
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(reports[r].size(), 1u) << "rank " << r;
    EXPECT_NE(reports[r][0].find("disagree"), std::string::npos) << reports[r][0];
    EXPECT_NE(reports[r][0].find("allreduce #1 (float32 sum), 40000 bytes on this ring, piece 0"), std::string::npos)
        << reports[r][0];
    EXPECT_NE(reports[r][0].find("allreduce #1 (float32 sum), 80000 bytes on this ring, piece 0"), std::string::npos)
        << reports[r][0];
  }
}

TEST_F(GraphTest, ARankThatOnlySendsLearnsOfTheMismatchToo) {
  SimWorld world({"2", {0, 1}});
  auto reports = disagree(world, CollKind::Broadcast, {30'000, 10'000});  // root 0 sends more than rank 1 takes
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(reports[r].size(), 1u) << "rank " << r;
    EXPECT_NE(reports[r][0].find("rank 0 sent broadcast #1 (float32), 120000 bytes on this ring, piece 0"),
              std::string::npos)
        << reports[r][0];
    EXPECT_NE(reports[r][0].find("rank 1 expected broadcast #1 (float32), 40000 bytes on this ring, piece 0"),
              std::string::npos)
        << reports[r][0];
  }
}

TEST_F(GraphTest, CountsThatDifferOnlyPastTheFirstChunkAreCaughtAtOnce) {
  ScopedEnv minChunk("HETCCL_GPU_MIN_CHUNK_BYTES", "65536");
  SimWorld world({"2", {0, 1}});  // one 64 KiB transfer vs two: the first pieces look alike
  auto reports = disagree(world, CollKind::AllReduce, {16'384, 32'768});
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(reports[r].size(), 1u) << "rank " << r;
    EXPECT_NE(reports[r][0].find("65536 bytes on this ring"), std::string::npos) << reports[r][0];
    EXPECT_NE(reports[r][0].find("131072 bytes on this ring"), std::string::npos) << reports[r][0];
  }
}

TEST_F(GraphTest, DifferentCallsInTheSameOrderPositionAreCaught) {
  SimWorld world({"2", {0, 1}});
  std::vector<std::vector<float>> bufs(2, std::vector<float>(2000, 1.0f));
  auto errors = test::runRanks(2, [&](int r) {
    algo::CollOp op;
    op.kind = r == 0 ? CollKind::AllReduce : CollKind::AllGather;  // the same 4000-byte messages, another call
    op.sendbuff = bufs[r].data();
    op.recvbuff = bufs[r].data();
    op.count = 1000;
    world.exec(r).enqueue({&op, 1}, world.userStream(r));
    world.exec(r).drain();
  });
  test::rethrowFirst(errors);
  ASSERT_TRUE(waitUntil([&] { return !world.failuresOf(0).empty() && !world.failuresOf(1).empty(); }));
  // The released streams may still copy into bufs: wait for them before the buffers go.
  EXPECT_TRUE(waitUntil([] { return test::sim::pendingOps() == 0; })) << "streams left waiting\n" << test::sim::dump();
  for (int r = 0; r < 2; ++r) {
    const std::string report = world.failuresOf(r)[0];
    EXPECT_NE(report.find("allreduce #1"), std::string::npos) << report;
    EXPECT_NE(report.find("allgather #1"), std::string::npos) << report;
  }
}

}  // namespace
}  // namespace hetccl::stream_exec
