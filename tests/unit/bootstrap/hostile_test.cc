// Hostile clients against the root and every mesh listener while a job initialises: garbage, an HTTP
// GET, forged and wrong-secret handshakes, half-open connections that never speak (more than the
// pending-handshake cap), 200 connections opened and closed. Init must still succeed.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "bootstrap/handshake.hpp"
#include "bootstrap_harness.hpp"

namespace hetccl::bootstrap {
namespace {

using testing::activeAttack;
using testing::passiveAttack;
using testing::joinAll;
using testing::JoinOptions;
using testing::onEveryRank;
using testing::ScopedEnv;

TEST(BootstrapHostile, InitSucceedsDespiteHostileClientsOnRootAndMesh) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "30");
  UniqueId id = createUniqueId();
  // Against the root, before any rank arrives: the half-open ones stay open through init.
  std::vector<net::Socket> held = passiveAttack(id.root, static_cast<uint16_t>(Purpose::Root), 100);
  for (auto& s : activeAttack(id.root, static_cast<uint16_t>(Purpose::Root), 0)) held.push_back(std::move(s));

  std::mutex heldLock;
  std::vector<std::thread> activeAttackers;
  JoinOptions opts;
  opts.deadlineMs = 30000;
  opts.hooks.onMeshListening = [&](int, const net::SocketAddress& mesh) {
    // Runs inside each rank's init, after its mesh listener is bound and before it joins the root: the
    // junk waits in the listener's backlog ahead of the real ranks. Forged handshakes need replies, which
    // come once the mesh phase serves the listener, so they run beside init.
    std::vector<net::Socket> more = passiveAttack(mesh, static_cast<uint16_t>(Purpose::Mesh), 70);
    auto connected = std::make_shared<std::promise<void>>();
    {
      std::lock_guard lock(heldLock);
      for (auto& s : more) held.push_back(std::move(s));
      // Claims rank 3, which the listeners of ranks 0..2 expect: only the proof can reject it.
      activeAttackers.emplace_back([&, mesh, connected] {
        auto sockets = activeAttack(mesh, static_cast<uint16_t>(Purpose::Mesh), 3, [&] { connected->set_value(); });
        std::lock_guard lock(heldLock);
        for (auto& s : sockets) held.push_back(std::move(s));
      });
    }
    connected->get_future().wait();  // both forgers sit in the backlog before this rank goes on
  };
  auto ranks = joinAll(id, 4, opts);
  for (auto& t : activeAttackers) t.join();
  for (size_t r = 0; r < ranks.size(); ++r)
    ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].errorType << ": " << ranks[r].error;
  onEveryRank(ranks, [](int r, Bootstrap& b) {
    std::vector<int32_t> slots(b.size(), -1);
    slots[r] = r * r;
    b.allGather(slots.data(), sizeof(int32_t));
    for (int q = 0; q < b.size(); ++q) EXPECT_EQ(slots[q], q * q);
    EXPECT_FALSE(b.failure());
  });
}

TEST(BootstrapHostile, LauncherRootStartedByRankZeroSurvivesAFlood) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "30");
  auto id = makeLauncherId(net::SocketAddress::parse(concat("127.0.0.1:", testing::freeLoopbackPort())));
  std::vector<net::Socket> held;
  JoinOptions opts;
  opts.deadlineMs = 30000;
  // Rank 0 starts the root inside init; attack it from rank 1's thread (connects retry until it listens).
  opts.hooks.onMeshListening = [&](int rank, const net::SocketAddress&) {
    if (rank != 1) return;
    held = passiveAttack(id.root, static_cast<uint16_t>(Purpose::Root), 80);
    for (auto& s : activeAttack(id.root, static_cast<uint16_t>(Purpose::Root), 0)) held.push_back(std::move(s));
  };
  auto ranks = joinAll(id, 3, opts);
  for (size_t r = 0; r < ranks.size(); ++r)
    ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].errorType << ": " << ranks[r].error;
  onEveryRank(ranks, [](int, Bootstrap& b) { b.barrier(); });
}

/// Join options under which rank 1 holds another secret than the others.
JoinOptions rankOneWithAnotherSecret(int deadlineMs) {
  JoinOptions opts;
  opts.deadlineMs = deadlineMs;
  opts.idFor = [](int rank, const UniqueId& id) {
    UniqueId other = id;
    if (rank == 1) other.secret[0] ^= 0x5a;
    return other;
  };
  return opts;
}

// A rank started with another secret (a launcher handed it another HETCCL_SECRET): it fails at once (the
// root does not prove this job's secret to it), and the root, seeing a client claim rank 1 and fail on its
// proof, tells every other rank within HETCCL_AUTH_FAILURE_GRACE instead of at HETCCL_TIMEOUT. Cost ~1 s.
TEST(BootstrapHostile, ARankWithAnotherSecretFailsEveryRankWithinTheGrace) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "60");
  ScopedEnv grace("HETCCL_AUTH_FAILURE_GRACE", "1");
  const JoinOptions opts = rankOneWithAnotherSecret(60000);
  const auto start = std::chrono::steady_clock::now();
  auto ranks = joinAll(createUniqueId(), 3, opts);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(ranks[1].bootstrap);
  EXPECT_NE(ranks[1].error.find("secret"), std::string::npos) << ranks[1].error;
  for (int r : {0, 2}) {
    ASSERT_FALSE(ranks[r].bootstrap) << "rank " << r;
    EXPECT_NE(ranks[r].error.find("rank 1 of 3 did not join"), std::string::npos) << ranks[r].error;
    EXPECT_NE(ranks[r].error.find("a client claiming rank 1 failed authentication"), std::string::npos) << ranks[r].error;
    EXPECT_NE(ranks[r].error.find("HETCCL_AUTH_FAILURE_GRACE"), std::string::npos) << ranks[r].error;
  }
  // Not a timing figure: what separates the grace from the 60 s deadline on a loaded machine.
  EXPECT_LT(took, std::chrono::seconds(30));
}

// With the grace off, an unauthenticated client cannot shorten init: the ranks wait for HETCCL_TIMEOUT, and
// the deadline's message still names the failed handshake. Cost ~2 s.
TEST(BootstrapHostile, WithTheGraceOffAWrongSecretWaitsForTheDeadline) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "2");
  ScopedEnv grace("HETCCL_AUTH_FAILURE_GRACE", "0");
  auto ranks = joinAll(createUniqueId(), 3, rankOneWithAnotherSecret(2000));
  for (int r : {0, 2}) {
    ASSERT_FALSE(ranks[r].bootstrap) << "rank " << r;
    EXPECT_NE(ranks[r].error.find("before the init deadline"), std::string::npos) << ranks[r].error;
    EXPECT_NE(ranks[r].error.find("failed the handshake"), std::string::npos) << ranks[r].error;
  }
}

// A stranger claiming rank 2 with a wrong proof does not fail a job whose real rank 2 joined: here rank 2
// joins at once, and rank 1 only 2 s later, after the grace (1 s) has run out; the job completes. Cost ~2 s.
TEST(BootstrapHostile, AForgedClaimDoesNotFailAJobWhoseClaimedRankJoined) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "30");
  ScopedEnv grace("HETCCL_AUTH_FAILURE_GRACE", "1");
  UniqueId id = createUniqueId();
  std::vector<net::Socket> held = activeAttack(id.root, static_cast<uint16_t>(Purpose::Root), 2);
  JoinOptions opts;
  opts.deadlineMs = 30000;
  opts.tweak = [](int rank, int&, PeerInfo&) {
    if (rank == 1) std::this_thread::sleep_for(std::chrono::seconds(2));
  };
  auto ranks = joinAll(id, 3, opts);
  for (size_t r = 0; r < ranks.size(); ++r)
    ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].errorType << ": " << ranks[r].error;
  onEveryRank(ranks, [](int, Bootstrap& b) { b.barrier(); });
}

}  // namespace
}  // namespace hetccl::bootstrap
