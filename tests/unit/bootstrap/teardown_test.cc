// Teardown with threads as ranks: a rank that finalized (barrier, then goodbye) and closed its
// connections has left normally, so its peers record no failure, even while they still wait on other
// ranks; views it did not leave, and ranks that close without a goodbye, are still reported as dead.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "bootstrap_harness.hpp"
#include "comm/communicator.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {
namespace {

using testing::joinAll;
using testing::JoinOptions;
using testing::JoinResult;
using testing::onEveryRank;
using testing::ScopedEnv;

void expectAllJoined(const std::vector<JoinResult>& ranks) {
  for (size_t r = 0; r < ranks.size(); ++r)
    ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].errorType << ": " << ranks[r].error;
}

/// Waits (up to 10 s) until `view` reports a failure; returns it.
std::optional<PeerError> awaitFailure(const Bootstrap& view) {
  Deadline tenSeconds = Deadline::afterMs(10000);
  while (!view.failure() && !tenSeconds.expired()) std::this_thread::yield();
  return view.failure();
}

// The reported race, made deterministic: rank 1 leaves the world and closes while rank 0 still waits
// for rank 2; rank 0's wait must not fail because of rank 1.
TEST(Teardown, RankThatSaidGoodbyeAndClosedIsNoFailureOfThatView) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  JoinOptions opts;
  opts.tweak = [](int r, int&, PeerInfo& self) { self.hostId = concat("node", char('A' + r)); };
  auto ranks = joinAll(createUniqueId(), 3, opts);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  std::vector<std::unique_ptr<Bootstrap>> other;  // a second view over the same sockets, never left
  for (auto& r : ranks) other.push_back(r.bootstrap->split({0, 1, 2}, 9));
  onEveryRank(ranks, [](int, Bootstrap& world) { world.barrier(); });

  ranks[1].bootstrap->leave();
  other[1].reset();
  ranks[1].bootstrap.reset();  // rank 1's mesh closes its sockets

  // Rank 0 has noticed the close (the view rank 1 did not leave reports it) ...
  auto dead = awaitFailure(*other[0]);
  ASSERT_TRUE(dead);
  EXPECT_EQ(dead->peer(), 1);
  EXPECT_EQ(std::string(dead->what()), "rank 1 (host nodeB) closed its bootstrap connection: process died?");
  // ... yet the world view, which rank 1 left, records no failure and still works between the others.
  EXPECT_FALSE(ranks[0].bootstrap->failure());
  uint32_t sent = 0xfeed, got = 0;
  ranks[2].bootstrap->send(0, 4, &sent, sizeof sent);
  ranks[0].bootstrap->recv(2, 4, &got, sizeof got);
  EXPECT_EQ(got, sent);
  // Waiting for a message rank 1 can no longer send is an error naming it, not a hang.
  try {
    ranks[0].bootstrap->recv(1, 5, &got, sizeof got);
    ADD_FAILURE() << "recv from a rank that left returned";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_NE(std::string(e.what()).find("finalized its communicator without sending"), std::string::npos) << e.what();
  }
  // The view rank 1 did not leave still fails waits with the death report.
  EXPECT_THROW(other[2]->recv(1, 5, &got, sizeof got), PeerError);
}

TEST(Teardown, RankClosingWithoutGoodbyeIsStillReportedOnEveryView) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  auto ranks = joinAll(createUniqueId(), 3);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  onEveryRank(ranks, [](int, Bootstrap& world) { world.barrier(); });
  ranks[2].bootstrap.reset();  // no leave(): a death
  for (int r : {0, 1}) {
    auto f = awaitFailure(*ranks[r].bootstrap);
    ASSERT_TRUE(f) << "rank " << r;
    EXPECT_EQ(f->peer(), 2);
    uint32_t v;
    EXPECT_THROW(ranks[r].bootstrap->recv(1 - r, 6, &v, sizeof v), PeerError);  // a member died: no hang
  }
}

// Finalize (barrier + goodbye) and close in varied orders and timings: no rank may see a failure.
TEST(Teardown, FinalizeAndCloseInAnyOrderRecordsNoFailure) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  constexpr int kRanks = 4, kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    auto ranks = joinAll(createUniqueId(), kRanks);
    ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
    onEveryRank(ranks, [&ranks, round](int r, Bootstrap& world) {
      std::minstd_rand jitter(static_cast<unsigned>(round * kRanks + r + 1));
      // Like a split communicator destroyed before its parent: both views finalize over one mesh.
      auto child = world.split({3, 2, 1, 0}, 3);
      for (Bootstrap* view : {child.get(), &world}) {
        std::this_thread::sleep_for(std::chrono::microseconds(jitter() % 1500));  // varies the order only
        view->barrier();
        view->leave();
        auto f = view->failure();
        EXPECT_FALSE(f) << "rank " << r << " round " << round << ": " << f->what();
      }
      if (jitter() % 2) std::this_thread::sleep_for(std::chrono::microseconds(jitter() % 1500));
      child.reset();
      ranks[r].bootstrap.reset();  // closes this rank's sockets while others may still be in the barrier
    });
  }
}

// The same through the communicator: finalize and destroy in varied orders, no error, nothing logged
// as a failure (asyncError stays Success on every rank until its own destroy).
TEST(Teardown, CommunicatorsFinalizeAndDestroyInAnyOrder) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  ScopedEnv transport("HETCCL_TRANSPORT", "tcp");  // threads of one process: tcp works everywhere
  constexpr int kRanks = 3, kRounds = 6;
  for (int round = 0; round < kRounds; ++round) {
    const UniqueId id = createUniqueId();
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] {
        std::minstd_rand jitter(static_cast<unsigned>(round * kRanks + r + 7));
        try {
          auto comm = Communicator::create(id, kRanks, r, CommOptions{});
          std::this_thread::sleep_for(std::chrono::microseconds(jitter() % 2000));
          comm->finalize();
          EXPECT_EQ(comm->asyncError(), Result::Success) << "rank " << r << ": " << comm->asyncErrorMessage();
          if (jitter() % 2) std::this_thread::sleep_for(std::chrono::microseconds(jitter() % 2000));
          comm.reset();
        } catch (const std::exception& e) {
          ADD_FAILURE() << "round " << round << " rank " << r << " threw: " << e.what();
        }
      });
    for (auto& t : threads) t.join();
  }
}

}  // namespace
}  // namespace hetccl::bootstrap
