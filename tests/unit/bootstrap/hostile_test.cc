// Hostile clients against the root and every mesh listener while a job initialises: garbage, an HTTP
// GET, forged and wrong-secret handshakes, half-open connections that never speak (more than the
// pending-handshake cap), 200 connections opened and closed. Init must still succeed.
#include <gtest/gtest.h>

#include <mutex>

#include "bootstrap/handshake.hpp"
#include "bootstrap_harness.hpp"

namespace hetccl::bootstrap {
namespace {

using testing::attack;
using testing::joinAll;
using testing::JoinOptions;
using testing::onEveryRank;
using testing::ScopedEnv;

TEST(BootstrapHostile, InitSucceedsDespiteHostileClientsOnRootAndMesh) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "30");
  UniqueId id = createUniqueId();
  // Against the root, before any rank arrives: the half-open ones stay open through init.
  std::vector<net::Socket> held = attack(id.root, static_cast<uint16_t>(Purpose::Root), 100);

  std::mutex heldLock;
  JoinOptions opts;
  opts.deadlineMs = 30000;
  opts.hooks.onMeshListening = [&](int, const net::SocketAddress& mesh) {
    // Runs inside each rank's init, after its mesh listener is bound and before it joins the root.
    std::vector<net::Socket> more = attack(mesh, static_cast<uint16_t>(Purpose::Mesh), 70);
    std::lock_guard lock(heldLock);
    for (auto& s : more) held.push_back(std::move(s));
  };
  auto ranks = joinAll(id, 4, opts);
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
    held = attack(id.root, static_cast<uint16_t>(Purpose::Root), 80);
  };
  auto ranks = joinAll(id, 3, opts);
  for (size_t r = 0; r < ranks.size(); ++r)
    ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].errorType << ": " << ranks[r].error;
  onEveryRank(ranks, [](int, Bootstrap& b) { b.barrier(); });
}

}  // namespace
}  // namespace hetccl::bootstrap
