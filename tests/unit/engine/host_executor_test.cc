// The host engine behind the executor interface (exec/host/host_executor.hpp), as the communicator and the
// staged executor use it: ranks are threads with real bootstraps and in-memory links. What it adds to the
// bare engine: the plan cache, failures reported once and sticky, bad input refused without a report.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"
#include "exec/host/host_executor.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

using algo::CollKind;
using algo::CollOp;

CollOp allReduce(float* data, size_t count) {
  CollOp op;
  op.kind = CollKind::AllReduce;
  op.sendbuff = op.recvbuff = data;
  op.count = count;
  return op;
}

/// One rank's executor over `links` and `boot`, counting what it reports.
struct RankExecutor {
  engine::ExecContext ctx;
  std::atomic<int> reported{0};
  std::unique_ptr<engine::HostExecutor> exec;
  RankExecutor(int rank, int n, bootstrap::Bootstrap& boot, transport::Links& links,
               const std::atomic<int>* sticky = nullptr) {
    ctx.timeoutMs = 10'000;
    exec = std::make_unique<engine::HostExecutor>(algo::Topology::singleDomain(rank, n), algo::Tuning{}, boot, links,
                                                  ctx, false, sticky, [this](const Error&) { reported++; });
  }
};

/// Runs body(rank, bootstrap, links) on `n` threads-as-ranks: a real bootstrap, links of `world`.
void onRanks(MemWorld& world, int n, const std::function<void(int, bootstrap::Bootstrap&, transport::Links&)>& body) {
  auto ranks = bootstrap::testing::joinAll(bootstrap::createUniqueId(), n);
  bootstrap::testing::onEveryRank(ranks, [&](int r, bootstrap::Bootstrap& boot) {
    auto links = world.linksFor(r);
    body(r, boot, *links);
  });
}

TEST(HostExecutor, RepeatedGroupsReuseTheirPlanAndStayExact) {
  constexpr int n = 3;
  MemWorld world(n);
  std::vector<std::string> errors(n);
  onRanks(world, n, [&](int r, bootstrap::Bootstrap& boot, transport::Links& links) {
    RankExecutor re(r, n, boot, links);
    std::vector<float> a(1000), b(77);
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(r + 1) * (round + 1) + static_cast<float>(i);
      CollOp op = allReduce(a.data(), a.size());
      re.exec->enqueue({&op, 1}, nullptr);
      for (size_t i = 0; i < a.size(); ++i)  // sum over ranks of (r + 1) * (round + 1) + i
        if (a[i] != 6.0f * (round + 1) + 3.0f * static_cast<float>(i)) {
          errors[r] = "round " + std::to_string(round) + ": element " + std::to_string(i) + " is " + std::to_string(a[i]);
          return;
        }
    }
    CollOp other = allReduce(b.data(), b.size());  // another shape: planned anew
    re.exec->enqueue({&other, 1}, nullptr);
    if (re.exec->planMisses() != 2 || re.exec->planHits() != 2)
      errors[r] = "plans: " + std::to_string(re.exec->planMisses()) + " misses, " + std::to_string(re.exec->planHits()) +
                  " hits (expected 2 and 2)";
    if (re.reported != 0) errors[r] += " reported a failure";
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(HostExecutor, ABadGroupIsRefusedUnreportedAndTheNextOneRuns) {
  constexpr int n = 2;
  MemWorld world(n);
  std::vector<std::string> errors(n);
  onRanks(world, n, [&](int r, bootstrap::Bootstrap& boot, transport::Links& links) {
    RankExecutor re(r, n, boot, links);
    std::vector<float> a(16, 1.0f);
    CollOp bad = allReduce(a.data(), a.size());
    bad.kind = CollKind::Broadcast;
    bad.root = 5;  // no such rank: the planner refuses it
    try {
      re.exec->enqueue({&bad, 1}, nullptr);
      errors[r] = "a broadcast from rank 5 of 2 was accepted";
      return;
    } catch (const InvalidArgument&) {
    }
    CollOp good = allReduce(a.data(), a.size());
    re.exec->enqueue({&good, 1}, nullptr);
    if (a[0] != 2.0f) errors[r] = "after the refusal the all-reduce gave " + std::to_string(a[0]);
    if (re.reported != 0) errors[r] += " the refusal was reported as a failure";
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(HostExecutor, AFailureIsReportedOnceAndEveryLaterGroupIsRefusedAtOnce) {
  constexpr int n = 2;
  MemWorld world(n);
  std::vector<float> data0(100000, 1.0f);  // outlives the rank threads: a failed rank must not free what peers read
  std::string error;
  int reported = -1;
  onRanks(world, n, [&](int r, bootstrap::Bootstrap& boot, transport::Links& links) {
    if (r == 1) {  // dies once the collective is under way
      const auto deadline = Deadline::afterMs(10'000);
      while (!deadline.expired()) {
        auto& ch = world.fabric().channel(0, 1);
        std::lock_guard<std::mutex> lock(ch.mutex);
        if (!ch.queue.empty()) break;
      }
      world.fabric().kill(1);
      return;
    }
    RankExecutor re(0, n, boot, links);
    CollOp op = allReduce(data0.data(), data0.size());
    try {
      re.exec->enqueue({&op, 1}, nullptr);
      error = "the all-reduce with a dead peer returned";
      return;
    } catch (const PeerError& e) {
      if (e.peer() != 1) error = std::string("blamed: ") + e.what();
    }
    const auto start = Clock::now();
    try {
      re.exec->enqueue({&op, 1}, nullptr);
      error += " the group after the failure ran";
    } catch (const Error& e) {
      if (std::string(e.what()).find("failed earlier") == std::string::npos) error += std::string(" later: ") + e.what();
    }
    if (Clock::now() - start > std::chrono::seconds(1)) error += " the refusal waited";
    reported = re.reported;
  });
  EXPECT_EQ(error, "");
  EXPECT_EQ(reported, 1);
}

TEST(HostExecutor, ACommunicatorThatFailedElsewhereGetsNoGroupRun) {
  constexpr int n = 1;
  MemWorld world(n);
  std::string error;
  onRanks(world, n, [&](int r, bootstrap::Bootstrap& boot, transport::Links& links) {
    std::atomic<int> sticky{static_cast<int>(Result::RemoteError)};
    RankExecutor re(r, n, boot, links, &sticky);
    std::vector<float> a(4, 3.0f);
    CollOp op = allReduce(a.data(), a.size());
    try {
      re.exec->enqueue({&op, 1}, nullptr);
      error = "ran";
    } catch (const Error& e) {
      if (e.code() != Result::RemoteError) error = std::string("code of ") + e.what();
    }
    sticky = 0;
    re.exec->enqueue({&op, 1}, nullptr);  // one rank: its own data
    if (a[0] != 3.0f) error += " wrong result";
  });
  EXPECT_EQ(error, "");
}

}  // namespace
}  // namespace hetccl::test
