// Failures during a collective: a killed rank, a silent rank, an aborted communicator, a broken schedule.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "algo/planner.hpp"
#include "core/error.hpp"
#include "exec/host/executor.hpp"
#include "exec/host/run_group.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

using algo::CollKind;
using algo::CollOp;

struct AllReduceRank {
  std::vector<float> data;
  CollOp op;
  explicit AllReduceRank(size_t count) : data(count, 1.0f) {
    op.kind = CollKind::AllReduce;
    op.sendbuff = op.recvbuff = data.data();
    op.count = count;
  }
};

algo::Tuning ringTuning() {
  algo::Tuning t;
  t.algo = algo::AlgoChoice::Ring;
  t.chunkBytes = 4096;
  return t;
}

/// Waits (bounded) until some rank has a message queued for `rank`: the collective is under way.
void waitUntilSomeoneSendsTo(transport::mem::Fabric& fabric, int rank) {
  const auto deadline = Deadline::afterMs(10'000);
  while (!deadline.expired()) {
    for (int from = 0; from < fabric.nranks(); ++from) {
      auto& ch = fabric.channel(from, rank);
      std::lock_guard<std::mutex> lock(ch.mutex);
      if (!ch.queue.empty()) return;
    }
    std::this_thread::yield();
  }
  FAIL() << "nobody sent to rank " << rank;
}

TEST(Failures, KilledRankIsNamedByItsNeighbour) {
  MemWorld world(2);
  AllReduceRank rank0(100000);  // outlives the rank threads: a failed rank must not free what peers may read
  auto errors = runRanks(2, [&](int r) {
    if (r == 1) {
      waitUntilSomeoneSendsTo(world.fabric(), 1);
      world.fabric().kill(1);
      return;
    }
    auto links = world.linksFor(r);
    engine::ExecContext ctx;
    ctx.timeoutMs = 10'000;
    engine::runGroup(algo::Topology::singleDomain(r, 2), {&rank0.op, 1}, *links, ctx, ringTuning());
  });
  ASSERT_TRUE(errors[0]);
  try {
    std::rethrow_exception(errors[0]);
  } catch (const TimeoutError& e) {
    FAIL() << "a timeout, not the peer error: " << e.what();
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
}

TEST(Failures, KilledRankMidCollectiveFailsEveryRank) {
  constexpr int n = 4, victim = 2;
  MemWorld world(n);
  // User buffers outlive every rank thread (as a real peer's memory outlives our failure): only the
  // engine's own scratch and reducers are freed while other ranks still run, which abandon() covers.
  std::vector<std::unique_ptr<AllReduceRank>> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<AllReduceRank>(200000));
  auto errors = runRanks(n, [&](int r) {
    if (r == victim) {
      waitUntilSomeoneSendsTo(world.fabric(), victim);
      world.fabric().kill(victim);
      return;
    }
    AllReduceRank& rank = *ranks[r];
    auto links = world.linksFor(r);
    engine::ExecContext ctx;
    ctx.timeoutMs = 10'000;
    // What the communicator does with the bootstrap's failure detector: ranks not talking to the victim
    // learn of its death here.
    ctx.checkFailure = [&] {
      if (world.fabric().isDead(victim)) throw PeerError(victim, "", concat("bootstrap: rank ", victim, " died"));
    };
    algo::Topology topo{r, n, {0, 0, 1, 1}};
    engine::runGroup(topo, {&rank.op, 1}, *links, ctx, ringTuning());
  });
  for (int r = 0; r < n; ++r) {
    if (r == victim) continue;
    ASSERT_TRUE(errors[r]) << "rank " << r << " finished";
    try {
      std::rethrow_exception(errors[r]);
    } catch (const PeerError& e) {
      EXPECT_EQ(e.peer(), victim) << "rank " << r << ": " << e.what();
    }
  }
}

TEST(Failures, SilentRankTimesOutNamingIt) {
  constexpr int n = 3, silent = 2;
  MemWorld world(n);
  std::vector<std::unique_ptr<AllReduceRank>> ranks;  // outlive the rank threads
  for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<AllReduceRank>(50000));
  auto errors = runRanks(n, [&](int r) {
    if (r == silent) return;  // never joins
    AllReduceRank& rank = *ranks[r];
    auto links = world.linksFor(r);
    engine::ExecContext ctx;
    ctx.timeoutMs = 300;
    engine::runGroup(algo::Topology::singleDomain(r, n), {&rank.op, 1}, *links, ctx, ringTuning());
  });
  for (int r = 0; r < silent; ++r) {
    ASSERT_TRUE(errors[r]) << "rank " << r << " finished";
    try {
      std::rethrow_exception(errors[r]);
    } catch (const TimeoutError& e) {
      EXPECT_EQ(e.peer(), silent) << e.what();
      EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
    }
  }
}

TEST(Failures, TimeoutNamesHostWhenKnown) {
  MemWorld world(2);
  auto links = world.linksFor(0);
  AllReduceRank rank(10);
  engine::ExecContext ctx;
  ctx.timeoutMs = 50;
  ctx.peers.resize(2);
  ctx.peers[1].rank = 1;
  ctx.peers[1].hostId = "nodeB";
  try {
    engine::runGroup(algo::Topology::singleDomain(0, 2), {&rank.op, 1}, *links, ctx, ringTuning());
    FAIL() << "no timeout";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_EQ(e.host(), "nodeB");
    EXPECT_NE(std::string(e.what()).find("nodeB"), std::string::npos) << e.what();
  }
}

TEST(Failures, AbortFlagStopsExecution) {
  MemWorld world(2);
  auto links = world.linksFor(0);
  AllReduceRank rank(1000);
  std::atomic<bool> abortFlag{true};
  engine::ExecContext ctx;
  ctx.abortFlag = &abortFlag;
  EXPECT_THROW(
      engine::runGroup(algo::Topology::singleDomain(0, 2), {&rank.op, 1}, *links, ctx, ringTuning()),
      AbortedError);
}

TEST(Failures, ScheduleDependingOnLaterStepIsInternalError) {
  algo::Schedule s;
  s.steps.resize(2);
  s.deps = {1};
  s.steps[0].depBegin = 0;
  s.steps[0].depEnd = 1;
  s.steps[0].bytes = s.steps[1].bytes = 0;
  engine::ConnectionTable links(1);
  EXPECT_THROW(engine::execute(s, links, engine::ExecContext{}), InternalError);
}

TEST(Failures, MissingConnectionIsInvalidUsage) {
  engine::ConnectionTable links(2);
  AllReduceRank rank(10);
  EXPECT_THROW(engine::runGroup(algo::Topology::singleDomain(0, 2), {&rank.op, 1}, links, engine::ExecContext{},
                                ringTuning()),
               InvalidUsage);
}

}  // namespace
}  // namespace hetccl::test
