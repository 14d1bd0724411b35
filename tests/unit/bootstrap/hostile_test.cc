// Hostile clients against the root and every mesh listener while a job initialises: garbage, an HTTP
// GET, forged and wrong-secret handshakes, half-open connections that never speak (more than the
// pending-handshake cap), 200 connections opened and closed. Init must still succeed.
#include <gtest/gtest.h>

#include <future>
#include <mutex>

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

}  // namespace
}  // namespace hetccl::bootstrap
