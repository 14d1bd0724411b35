// The stream pipeline end to end on the simulated GPU: threads as ranks, real bootstrap, real shared-
// memory rings, the real planner and compiler; every collective, layout, algorithm, type and operator
// compared exactly with the reference of tests/unit/algo/collective_case. Rings of two 64 KiB slots make
// every message wrap the ring many times (flow control). Failures: abort, a dead peer, a stalled peer
// (HETCCL_TIMEOUT) and a runtime call that fails half-way all release the streams (nothing left queued)
// and are reported once.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"
#include "sim_gpu.hpp"
#include "sim_world.hpp"
#include "exec/pipeline/stream_executor.hpp"
#include "stream_test_support.hpp"
#include "unit/algo/collective_case.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::CollKind;
using bootstrap::testing::ScopedEnv;
using test::CollCase;
using test::Layout;
using test::SimWorld;

class StreamExecTest : public test::SmallRingTest {};

TEST_F(StreamExecTest, EveryCollectiveOnEveryLayoutIsExact) {
  // "2 (ring)": two ranks without the pair exchange, so all-reduce runs reduce-scatter + all-gather.
  const std::vector<Layout> layouts = {{"2", {0, 1}},         {"2 (ring)", {0, 1}},   {"3", {0, 1, 2}},
                                       {"2+2", {0, 0, 1, 1}}, {"3+1", {0, 0, 0, 1}}, {"interleaved", {0, 1, 0, 1}}};
  for (const Layout& layout : layouts) {
    ScopedEnv exchange("HETCCL_GPU_PAIR_EXCHANGE_BYTES", layout.name == "2 (ring)" ? "0" : nullptr);
    SimWorld world(layout);
    test::expectEveryKindExact(world);
  }
}

TEST_F(StreamExecTest, EveryAlgorithmIsExact) {
  for (const char* algo : {"ring", "tree", "rd", "hier"}) {
    ScopedEnv force("HETCCL_ALGO", algo);
    SimWorld world({"2+1", {0, 0, 1}});
    for (CollKind kind : {CollKind::AllReduce, CollKind::Broadcast, CollKind::Reduce})
      for (size_t count : {size_t{3}, size_t{50'000}}) {
        CollCase c;
        c.kind = kind;
        c.count = count;
        c.root = 1;
        c.layout = {"2+1", {0, 0, 1}};
        EXPECT_EQ(world.run(c), "") << algo << ": " << c.describe();
      }
  }
}

TEST_F(StreamExecTest, EveryTypeAndOperatorIsExact) {
  SimWorld world({"3", {0, 1, 2}});
  for (DataType type : {DataType::Int8, DataType::Uint8, DataType::Int32, DataType::Uint32, DataType::Int64,
                        DataType::Uint64, DataType::Float16, DataType::Float32, DataType::Float64, DataType::Bfloat16})
    for (RedOpKind op : {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min, RedOpKind::Avg,
                         RedOpKind::PreMulSum}) {
      CollCase c;
      c.kind = CollKind::AllReduce;
      c.count = 20'000;
      c.type = type;
      c.op = op;
      c.layout = {"3", {0, 1, 2}};
      EXPECT_EQ(world.run(c), "") << c.describe();
    }
}

/// Rank 0 queues an all-reduce its peer never joins; `fail` makes it fail. Returns rank 0's reports.
std::vector<std::string> failAlone(SimWorld& world, const std::function<void()>& fail) {
  std::vector<float> buf(100'000, 1.0f);
  algo::CollOp op;
  op.sendbuff = op.recvbuff = buf.data();
  op.count = buf.size();
  world.exec(0).enqueue({&op, 1}, world.userStream(0));
  fail();
  world.exec(0).drain();  // returns once the failure released the group
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (test::sim::pendingOps() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(test::sim::pendingOps(), 0u) << "the released streams did not finish";
  return world.failuresOf(0);
}

TEST_F(StreamExecTest, AbortReleasesTheStreamsAndIsReportedOnce) {
  SimWorld world({"2", {0, 1}});
  auto reports = failAlone(world, [&] { world.aborted(0) = true; });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("aborted"), std::string::npos) << reports[0];
  algo::CollOp op;
  EXPECT_THROW(world.exec(0).enqueue({&op, 1}, nullptr), InvalidUsage);  // failed: nothing more is queued
}

TEST_F(StreamExecTest, DeadPeerIsNamed) {
  std::atomic<bool> dead{false};
  SimWorld world({"2", {0, 1}}, [&] {
    if (dead) throw PeerError(1, "hostB", "rank 1 on host hostB died");
  });
  auto reports = failAlone(world, [&] { dead = true; });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("rank 1 on host hostB"), std::string::npos) << reports[0];
}

TEST_F(StreamExecTest, StalledPeerTimesOutAfterHetcclTimeout) {
  ScopedEnv shortTimeout("HETCCL_TIMEOUT", "1");
  SimWorld world({"2", {0, 1}});
  const auto start = std::chrono::steady_clock::now();
  auto reports = failAlone(world, [] {});
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("HETCCL_TIMEOUT"), std::string::npos) << reports[0];
}

TEST_F(StreamExecTest, RuntimeFailureWhileQueuingReleasesWhatWasQueued) {
  SimWorld world({"2", {0, 1}});
  std::vector<float> buf(100'000, 1.0f);
  algo::CollOp op;
  op.sendbuff = op.recvbuff = buf.data();
  op.count = buf.size();
  test::sim::failMemcpyAfter(3);
  EXPECT_THROW(world.exec(0).enqueue({&op, 1}, world.userStream(0)), Error);
  test::sim::failMemcpyAfter(0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (test::sim::pendingOps() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(test::sim::pendingOps(), 0u);
  auto reports = world.failuresOf(0);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("injected failure"), std::string::npos) << reports[0];
}

}  // namespace
}  // namespace hetccl::stream_exec

namespace hetccl::stream_exec {
namespace {

// Ranks may make different numbers of point-to-point calls (NCCL allows it): rank 1 receives from rank 0
// and from rank 2 in separate calls, ranks 0 and 2 make one call each, then rank 0 sends again. Each
// ring's stamps count the groups on that ring, so nothing is reported; a per-rank call number would make
// rank 1 expect call #3 where rank 0 sent #2 (seen under torch before the stamps were per ring).
TEST_F(StreamExecTest, PointToPointWithDifferentCallCountsPerRankIsNoMismatch) {
  SimWorld world({"3", {0, 1, 2}});
  constexpr size_t kCount = 1000;
  std::vector<std::vector<float>> data(3, std::vector<float>(kCount));
  for (int r = 0; r < 3; ++r)
    for (size_t i = 0; i < kCount; ++i) data[r][i] = static_cast<float>(r * 10'000 + i);
  std::vector<float> fromZero(kCount), fromTwo(kCount), again(kCount);
  auto p2p = [](algo::CollKind kind, const void* send, void* recv, int peer) {
    algo::CollOp op;
    op.kind = kind;
    op.sendbuff = send;
    op.recvbuff = recv;
    op.count = kCount;
    op.peer = peer;
    return op;
  };
  auto runOn = [&](int rank, const algo::CollOp& op) {
    world.exec(rank).enqueue({&op, 1}, world.userStream(rank));
  };
  std::thread r0([&] {
    runOn(0, p2p(algo::CollKind::Send, data[0].data(), nullptr, 1));
    runOn(0, p2p(algo::CollKind::Send, data[0].data(), nullptr, 1));
    world.exec(0).drain();
  });
  std::thread r2([&] {
    runOn(2, p2p(algo::CollKind::Send, data[2].data(), nullptr, 1));
    world.exec(2).drain();
  });
  runOn(1, p2p(algo::CollKind::Recv, nullptr, fromZero.data(), 0));
  runOn(1, p2p(algo::CollKind::Recv, nullptr, fromTwo.data(), 2));
  runOn(1, p2p(algo::CollKind::Recv, nullptr, again.data(), 0));
  world.exec(1).drain();
  r0.join();
  r2.join();
  ASSERT_TRUE(test::sim::waitIdle(std::chrono::seconds(30)));
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
  EXPECT_EQ(fromZero, data[0]);
  EXPECT_EQ(fromTwo, data[2]);
  EXPECT_EQ(again, data[0]);
}

}  // namespace
}  // namespace hetccl::stream_exec
