// Bootstrap with threads as ranks: init, descriptors, allGather, tagged send/recv, barrier, split,
// configuration overrides, mismatches, peer death and abort.
#include <gtest/gtest.h>

#include <future>
#include <numeric>
#include <set>
#include <poll.h>
#include <unistd.h>

#include "bootstrap_harness.hpp"
#include "bootstrap/acceptor.hpp"
#include "bootstrap/join.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {
namespace {

using testing::joinAll;
using testing::JoinOptions;
using testing::onEveryRank;
using testing::ScopedEnv;

class BootstrapTest : public ::testing::TestWithParam<int> {
 protected:
  ScopedEnv timeout_{"HETCCL_TIMEOUT", "20"};  // a bug becomes a failure, not a hang
};

void expectAllJoined(const std::vector<testing::JoinResult>& ranks) {
  for (size_t r = 0; r < ranks.size(); ++r)
    ASSERT_TRUE(ranks[r].bootstrap) << "rank " << r << ": " << ranks[r].errorType << ": " << ranks[r].error;
}

TEST_P(BootstrapTest, JoinsAndExchanges) {
  const int n = GetParam();
  auto ranks = joinAll(createUniqueId(), n);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  onEveryRank(ranks, [n](int r, Bootstrap& b) {
    EXPECT_EQ(b.rank(), r);
    EXPECT_EQ(b.size(), n);
    ASSERT_EQ(b.peers().size(), size_t(n));
    for (int q = 0; q < n; ++q) {
      EXPECT_EQ(b.peers()[q].rank, q);
      EXPECT_EQ(b.peers()[q].pid, getpid());
      EXPECT_EQ(b.peers()[q].domain, "host");
      EXPECT_EQ(b.peers()[q].protocolVersion, kProtocolVersion);
      EXPECT_EQ(b.peers()[q].hostId, b.peers()[0].hostId);
    }
    std::vector<uint64_t> slots(n, 0);
    slots[r] = 1000 + r;
    b.allGather(slots.data(), sizeof(uint64_t));
    for (int q = 0; q < n; ++q) EXPECT_EQ(slots[q], uint64_t(1000 + q));

    // Tagged messages, sent in one order and received in another.
    if (n > 1) {
      int next = (r + 1) % n, prev = (r + n - 1) % n;
      for (uint32_t tag : {7u, 3u, 11u}) {
        uint32_t v = r * 100 + tag;
        b.send(next, tag, &v, sizeof v);
      }
      for (uint32_t tag : {11u, 7u, 3u}) {
        uint32_t v = 0;
        b.recv(prev, tag, &v, sizeof v);
        EXPECT_EQ(v, uint32_t(prev * 100 + tag));
      }
    }
    b.barrier();
    b.barrier();
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, BootstrapTest, ::testing::Values(1, 2, 5));

TEST(Bootstrap, SplitGivesEachGroupItsOwnRanksAndTags) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  auto ranks = joinAll(createUniqueId(), 5);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  onEveryRank(ranks, [](int r, Bootstrap& b) {
    std::vector<int> group = r % 2 == 0 ? std::vector<int>{0, 2, 4} : std::vector<int>{3, 1};
    auto child = b.split(group, 77);
    int expectRank = int(std::find(group.begin(), group.end(), r) - group.begin());
    EXPECT_EQ(child->rank(), expectRank);
    EXPECT_EQ(child->size(), int(group.size()));
    for (int i = 0; i < child->size(); ++i) EXPECT_EQ(child->peers()[i].rank, i);
    std::vector<int32_t> slots(child->size(), -1);
    slots[child->rank()] = r;
    child->allGather(slots.data(), sizeof(int32_t));
    EXPECT_EQ(slots, std::vector<int32_t>(group.begin(), group.end()));
    // The same tag in parent and child stays apart.
    if (r == 0) {
      int32_t parentMsg = 1, childMsg = 2;
      b.send(2, 5, &parentMsg, sizeof parentMsg);       // parent rank 2
      child->send(1, 5, &childMsg, sizeof childMsg);    // child rank 1 = parent rank 2
    } else if (r == 2) {
      int32_t got = 0;
      child->recv(0, 5, &got, sizeof got);
      EXPECT_EQ(got, 2);
      b.recv(0, 5, &got, sizeof got);
      EXPECT_EQ(got, 1);
    }
    child->barrier();
    EXPECT_THROW(b.split({r == 0 ? 1 : 0}, 1), InvalidArgument);  // this rank is not in the group
    EXPECT_THROW(b.split({r, r}, 1), InvalidArgument);
  });
}

TEST(Bootstrap, LauncherIdLetsRankZeroStartTheRoot) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  auto id = makeLauncherId(net::SocketAddress::parse(concat("127.0.0.1:", testing::freeLoopbackPort())));
  auto ranks = joinAll(id, 3);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  onEveryRank(ranks, [](int r, Bootstrap& b) { b.barrier(); });
}

TEST(Bootstrap, WrongSizeMessageIsAPeerError) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  auto ranks = joinAll(createUniqueId(), 2);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  uint64_t big = 1;
  ranks[0].bootstrap->send(1, 9, &big, sizeof big);
  uint32_t small = 0;
  EXPECT_THROW(ranks[1].bootstrap->recv(0, 9, &small, sizeof small), PeerError);
  EXPECT_THROW(ranks[1].bootstrap->send(1, 0, &small, sizeof small), InvalidArgument);  // itself
  EXPECT_THROW(ranks[1].bootstrap->send(2, 0, &small, sizeof small), InvalidArgument);
}

TEST(Bootstrap, HostIdAndDomainOverridesReachEveryPeer) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  {
    ScopedEnv host("HETCCL_HOST_ID", "nodeX");
    ScopedEnv domain("HETCCL_DOMAIN", "cuda+nccl");
    PeerInfo self = detectSelf(3, DeviceKind::Cuda, 1);
    EXPECT_EQ(self.hostId, "nodeX");
    EXPECT_EQ(self.domain, "cuda+nccl");
    EXPECT_EQ(self.rank, 3);
    EXPECT_EQ(self.deviceIndex, 1);
    EXPECT_EQ(self.pid, getpid());
  }
  {
    ScopedEnv domain("HETCCL_DOMAIN", "bad domain!");
    EXPECT_THROW(detectSelf(0, DeviceKind::Host, -1), InvalidArgument);
  }
  PeerInfo detected = detectSelf(0, DeviceKind::Hip, 0);
  EXPECT_EQ(detected.domain, "hip");
  EXPECT_FALSE(detected.hostId.empty());

  // Per-rank overrides (as separate processes would have them) travel in the descriptors.
  JoinOptions opts;
  opts.tweak = [](int r, int&, PeerInfo& self) {
    self.hostId = concat("node", char('A' + r));
    self.domain = r == 0 ? "cuda+nccl" : "hip+rccl";
    self.deviceKind = r == 0 ? DeviceKind::Cuda : DeviceKind::Hip;
    self.deviceIndex = r;
  };
  auto ranks = joinAll(createUniqueId(), 2, opts);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  for (auto& rr : ranks) {
    const auto& p = rr.bootstrap->peers();
    EXPECT_EQ(p[0].hostId, "nodeA");
    EXPECT_EQ(p[1].hostId, "nodeB");
    EXPECT_EQ(p[0].domain, "cuda+nccl");
    EXPECT_EQ(p[1].domain, "hip+rccl");
    EXPECT_EQ(p[1].deviceKind, DeviceKind::Hip);
    EXPECT_EQ(p[1].deviceIndex, 1);
  }
}

void expectSameInvalidUsageEverywhere(const std::vector<testing::JoinResult>& ranks, const std::string& needle) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    EXPECT_FALSE(ranks[r].bootstrap) << "rank " << r << " joined";
    EXPECT_EQ(ranks[r].errorType, "InvalidUsage") << "rank " << r << ": " << ranks[r].error;
    EXPECT_EQ(ranks[r].error, ranks[0].error) << "rank " << r;
  }
  EXPECT_NE(ranks[0].error.find(needle), std::string::npos) << ranks[0].error;
}

TEST(Bootstrap, MismatchedNranksFailsEveryRankWithOneMessage) {
  // The ranks fail at once; the root then lingers at process exit until its deadline (HETCCL_TIMEOUT, from
  // createUniqueId) for a fourth rank the job might have (root.hpp): 3 s instead of the default 30.
  ScopedEnv shortRoot("HETCCL_TIMEOUT", "3");
  JoinOptions opts;
  opts.tweak = [](int r, int& nranks, PeerInfo&) {
    if (r == 2) nranks = 4;
  };
  auto ranks = joinAll(createUniqueId(), 3, opts);
  expectSameInvalidUsageEverywhere(ranks, "nranks=");
}

TEST(Bootstrap, MismatchedProtocolVersionFailsEveryRankWithOneMessage) {
  JoinOptions opts;
  opts.tweak = [](int r, int&, PeerInfo& self) {
    if (r == 1) self.protocolVersion = kProtocolVersion + 1;
  };
  auto ranks = joinAll(createUniqueId(), 3, opts);
  expectSameInvalidUsageEverywhere(ranks, concat("rank 1 uses protocol version ", kProtocolVersion + 1));
}

TEST(Bootstrap, DuplicateRankFailsEveryRankWithOneMessage) {
  JoinOptions opts;
  opts.tweak = [](int r, int&, PeerInfo&) {};
  // Thread 2 claims rank 1 too: connectWithHooks is given rank 1 through the id hook below.
  auto id = createUniqueId();
  std::vector<testing::JoinResult> ranks(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      int rank = t == 2 ? 1 : t;
      try {
        PeerInfo self = detectSelf(rank, DeviceKind::Host, -1);
        ranks[t].bootstrap = connect(id, rank, 3, self, Deadline::afterMs(20000));
      } catch (const InvalidUsage& e) {
        ranks[t] = {nullptr, "InvalidUsage", e.what()};
      } catch (const std::exception& e) {
        ranks[t] = {nullptr, "Error", e.what()};
      }
    });
  for (auto& t : threads) t.join();
  expectSameInvalidUsageEverywhere(ranks, "rank 1 joined twice");
}

TEST(Bootstrap, RankWithAnotherSecretTimesOutAndTheOthersStillJoin) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  auto id = createUniqueId();
  UniqueId wrong = id;
  wrong.secret[0] ^= 1;
  auto stranger = std::async(std::launch::async, [&] {
    PeerInfo self = detectSelf(0, DeviceKind::Host, -1);
    try {
      connect(wrong, 0, 2, self, Deadline::afterMs(500));
      return std::string("joined");
    } catch (const InvalidArgument& e) {  // the root's proof does not match our secret
      return std::string("InvalidArgument");
    } catch (const TimeoutError& e) {
      return std::string("TimeoutError");
    }
  });
  EXPECT_EQ(stranger.get(), "InvalidArgument");
  auto ranks = joinAll(id, 2);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
}

TEST(Bootstrap, ClosedRankIsNamedByEveryOtherRank) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  JoinOptions opts;
  opts.tweak = [](int r, int&, PeerInfo& self) { self.hostId = concat("node", char('A' + r)); };
  auto ranks = joinAll(createUniqueId(), 3, opts);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  ranks[2].bootstrap.reset();  // rank 2's "process" leaves
  for (int r : {0, 1}) {
    uint32_t v;
    try {
      ranks[r].bootstrap->recv(2, 1, &v, sizeof v);  // wakes when the failure is noticed
      ADD_FAILURE() << "recv from a closed rank returned";
    } catch (const PeerError& e) {
      EXPECT_EQ(e.peer(), 2);
      EXPECT_EQ(std::string(e.what()), "rank 2 (host nodeC) closed its bootstrap connection: process died?");
    }
    Deadline twoSeconds = Deadline::afterMs(2000);
    while (!ranks[r].bootstrap->failure() && !twoSeconds.expired()) std::this_thread::yield();
    auto f = ranks[r].bootstrap->failure();
    ASSERT_TRUE(f) << "rank " << r;
    EXPECT_EQ(f->peer(), 2);
    EXPECT_EQ(f->host(), "nodeC");
  }
}

/// The descriptor table of a 3-rank job, rank r on host "node<r>", mesh addresses left for the test to set.
std::vector<RankDescriptor> threeRankTable() {
  std::vector<RankDescriptor> table(3);
  for (int r = 0; r < 3; ++r) {
    table[r].info.rank = r;
    table[r].info.hostId = concat("node", r);
    table[r].nranks = 3;
  }
  return table;
}

// netns kill init_mid, 3 ranks: the root (rank 0) is killed after it sent rank 2 its table and before it
// answered rank 1, which then exits at once. Rank 2 finds both lower ranks' mesh listeners closed and must
// name rank 0, where the failure began, not rank 1, which only followed it (it named rank 1 1 time in 50).
// buildMesh on its own, with both lower listeners closed before it runs. Cost: milliseconds.
TEST(Bootstrap, MeshBuildNamesTheLowestRankThatIsGone) {
  const UniqueId id = createUniqueId();
  const net::SocketAddress loopback = net::SocketAddress::parse("127.0.0.1:0");
  std::vector<RankDescriptor> table = threeRankTable();
  net::Listener own(loopback);
  table[2].meshAddress = own.address();
  for (int r : {0, 1}) {  // a listener that was bound and is closed: connections to it are refused
    net::Listener gone(loopback);
    table[r].meshAddress = gone.address();
  }
  JoinContext ctx{id, 2, 3, Deadline::afterMs(10000), nullptr};
  try {
    buildMesh(ctx, own, table);
    ADD_FAILURE() << "the mesh was built without its lower ranks";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 0) << e.what();
    EXPECT_EQ(e.host(), "node0");
    EXPECT_NE(std::string(e.what()).find("rank 0 (host node0) refused its bootstrap mesh connection"), std::string::npos)
        << e.what();
  }
}

// netns kill init_mid, 3 ranks, over ucx: the root (rank 0) answered rank 1, which connected to it, then was
// killed before it answered rank 2, which exited. Rank 1 waits for rank 2 until its deadline; rank 0's mesh
// connection closed without a word meanwhile, so rank 0 is named, not rank 2. Here rank 0 is a listener that
// authenticates rank 1 and closes; rank 2 a listener that never accepts (its probes are not refused).
// Cost: 3 s (the deadline; long enough for the handshake with rank 0 under the sanitizers).
TEST(Bootstrap, MeshBuildNamesALowerRankThatClosedWithoutAWord) {
  const UniqueId id = createUniqueId();
  const net::SocketAddress loopback = net::SocketAddress::parse("127.0.0.1:0");
  std::vector<RankDescriptor> table = threeRankTable();
  net::Listener own(loopback), root(loopback), silent(loopback);
  table[0].meshAddress = root.address();
  table[1].meshAddress = own.address();
  table[2].meshAddress = silent.address();
  std::thread dyingRoot([&] {  // authenticates rank 1, then closes the connection without a Notice
    AuthenticatingAcceptor acceptor(root, id.secret, Purpose::Mesh, 0, [](int r) { return r == 1; });
    const Deadline until = Deadline::afterMs(5000);
    std::vector<pollfd> fds;
    while (!until.expired()) {
      fds.clear();
      acceptor.appendPollFds(fds);
      if (::poll(fds.data(), fds.size(), 50) <= 0)
        for (auto& f : fds) f.revents = 0;
      if (!acceptor.service(fds.data()).empty()) return;  // the socket closes as it goes out of scope
    }
  });
  JoinContext ctx{id, 1, 3, Deadline::afterMs(3000), nullptr};
  try {
    buildMesh(ctx, own, table);
    ADD_FAILURE() << "the mesh was built without rank 2";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0 (host node0) closed its bootstrap mesh connection"), std::string::npos)
        << e.what();
  }
  dyingRoot.join();
}

TEST(Bootstrap, AbortWakesABlockedRecv) {
  ScopedEnv timeout("HETCCL_TIMEOUT", "20");
  auto ranks = joinAll(createUniqueId(), 2);
  ASSERT_NO_FATAL_FAILURE(expectAllJoined(ranks));
  auto waiter = std::async(std::launch::async, [&] {
    uint32_t v;
    try {
      ranks[0].bootstrap->recv(1, 42, &v, sizeof v);
      return std::string("returned");
    } catch (const AbortedError&) {
      return std::string("aborted");
    }
  });
  ranks[0].bootstrap->abort();
  EXPECT_EQ(waiter.get(), "aborted");
  uint32_t v = 0;
  EXPECT_THROW(ranks[0].bootstrap->send(1, 1, &v, sizeof v), AbortedError);
}

TEST(Bootstrap, AbortFlagEndsAnIncompleteInit) {
  std::atomic<bool> abortFlag{false};
  auto id = createUniqueId();
  auto lone = std::async(std::launch::async, [&] {
    try {
      connect(id, 0, 2, detectSelf(0, DeviceKind::Host, -1), Deadline::afterMs(20000), &abortFlag);
      return std::string("joined");
    } catch (const AbortedError&) {
      return std::string("aborted");
    }
  });
  abortFlag = true;
  EXPECT_EQ(lone.get(), "aborted");
}

TEST(Bootstrap, RejectsBadArguments) {
  auto id = createUniqueId();
  PeerInfo self = detectSelf(0, DeviceKind::Host, -1);
  EXPECT_THROW(connect(id, 0, 0, self, Deadline::afterMs(100)), InvalidArgument);
  EXPECT_THROW(connect(id, 2, 2, self, Deadline::afterMs(100)), InvalidArgument);
  self.hostId = std::string(64, 'h');
  EXPECT_THROW(connect(id, 0, 1, self, Deadline::afterMs(100)), InvalidArgument);
}

}  // namespace
}  // namespace hetccl::bootstrap
