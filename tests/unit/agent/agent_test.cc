// Agents in one process (src/agent/agent.hpp), through the shared-memory windows and over tcp: what
// runs threads against each other -- posts from several threads, deregistration against reads,
// cancellation, a peer or the agent itself going away with transfers in flight. Verdicts from patterns
// computed here. Run under ThreadSanitizer in CI. ~3 s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.hpp"
#include "core/config.hpp"
#include "core/error.hpp"

namespace hetccl::agent {
namespace {

std::vector<unsigned char> secret() {
  const std::string s = "unit tests' agent secret 0123456";
  return {s.begin(), s.end()};
}

unsigned char pattern(uint64_t seed, uint64_t i) { return static_cast<unsigned char>((seed * 131 + i * 2654435761u) >> 11); }

class AgentTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("HETCCL_AGENT_WINDOW", GetParam(), 1);
    // Two slots of 64 KiB: every transfer here wraps around the window many times.
    setenv("HETCCL_RMA_WINDOW_SLOTS", "2", 1);
    setenv("HETCCL_RMA_WINDOW_BYTES", "64K", 1);
    reloadConfig();
    AgentOptions o;
    o.secret = secret();
    o.listenAddress = "127.0.0.1:0";
    o.timeoutSeconds = 10;
    a = std::make_unique<Agent>("A", o);
    b = std::make_unique<Agent>("B", o);
    bufA.assign(8 << 20, 0);
    bufB.assign(8 << 20, 0);
    ra = a->registerMemory(bufA.data(), bufA.size());
    rb = b->registerMemory(bufB.data(), bufB.size());
    ASSERT_EQ(a->loadRemote(b->metadata()), "B");
  }
  void TearDown() override {
    a.reset();
    b.reset();
    unsetenv("HETCCL_AGENT_WINDOW");
    unsetenv("HETCCL_RMA_WINDOW_SLOTS");
    unsetenv("HETCCL_RMA_WINDOW_BYTES");
    reloadConfig();
  }
  std::shared_ptr<Xfer> prep(MsgType t, uint64_t localOff, uint64_t remoteOff, uint64_t bytes, const std::string& notif = "") {
    const Range r{ra.id, rb.id, localOff, remoteOff, bytes};
    return a->prepare(t, "B", std::span(&r, 1), {reinterpret_cast<const unsigned char*>(notif.data()), notif.size()});
  }
  Result waitFor(Xfer& x, std::string& msg) { return a->wait(x, msg); }

  std::unique_ptr<Agent> a, b;
  std::vector<unsigned char> bufA, bufB;
  Agent::Registration ra, rb;
};

TEST_P(AgentTest, PostsFromManyThreadsLandAndTheirNotificationsFollowTheirData) {
  constexpr int kThreads = 4, kPosts = 50;
  constexpr uint64_t kSlice = 32 << 10;  // each post writes its own slice of B (200 slices fit)
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int p = 0; p < kPosts; ++p) {
        const uint64_t off = (t * kPosts + p) * kSlice;
        for (uint64_t i = 0; i < kSlice; ++i) bufA[off + i] = pattern(t * 1000 + p, i);  // only this thread's bytes
        auto x = prep(MsgType::Write, off, off, kSlice, std::to_string(t) + ":" + std::to_string(p));
        a->post(*x);
        std::string msg;
        if (waitFor(*x, msg) != Result::Success) failures++;
      }
    });
  // The target checks every notification against the data it announces, as it arrives.
  int seen = 0, wrong = 0;
  std::vector<int> next(kThreads, 0);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (seen < kThreads * kPosts && Clock::now() < deadline) {
    std::string from;
    unsigned char m[64];
    size_t size = 0;
    bool got = false;
    ASSERT_TRUE(b->takeNotif(from, m, sizeof m, size, got));
    if (!got) {
      std::this_thread::yield();
      continue;
    }
    const std::string s(reinterpret_cast<char*>(m), size);
    const int t = std::stoi(s.substr(0, s.find(':'))), p = std::stoi(s.substr(s.find(':') + 1));
    EXPECT_EQ(from, "A");
    EXPECT_EQ(p, next[t]) << "notifications of one thread out of post order";
    next[t] = p + 1;
    const uint64_t off = (t * kPosts + p) * kSlice;  // no other post writes this slice
    for (uint64_t i = 0; i < kSlice; ++i)
      if (bufB[off + i] != pattern(t * 1000 + p, i)) {
        ++wrong;
        break;
      }
    ++seen;
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(seen, kThreads * kPosts);
  EXPECT_EQ(wrong, 0) << "a notification arrived before its data";
}

TEST_P(AgentTest, DeregisteringAgainstReadsEndsEachReadWholeOrStale) {
  for (uint64_t i = 0; i < bufB.size(); ++i) bufB[i] = pattern(7, i);
  auto x = prep(MsgType::Read, 0, 0, bufB.size());
  std::atomic<bool> stop{false};
  std::atomic<int> whole{0}, stale{0}, other{0};
  std::thread reader([&] {
    while (!stop.load()) {
      std::fill(bufA.begin(), bufA.end(), 0);
      a->post(*x);
      std::string msg;
      const Result r = waitFor(*x, msg);
      if (r == Result::Success) {
        for (uint64_t i = 0; i < bufA.size(); i += 4093) ASSERT_EQ(bufA[i], pattern(7, i));
        ++whole;
      } else if (msg.find("stale") != std::string::npos) {
        ++stale;
        return;
      } else {
        ADD_FAILURE() << msg;
        ++other;
        return;
      }
    }
  });
  // At least one whole read first (no sleep: sanitizer builds are many times slower), then deregister
  // while the reader keeps posting.
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (whole.load() == 0 && other.load() == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  b->deregister(rb.id, rb.generation);  // waits for a read in progress
  std::vector<unsigned char>().swap(bufB);  // freed: a read still touching it would be caught by ASan
  reader.join();
  stop = true;
  EXPECT_GT(whole.load(), 0);
  EXPECT_EQ(stale.load(), 1);
  EXPECT_EQ(other.load(), 0);
}

TEST_P(AgentTest, CancelEndsQueuedAndRunningPostsAndTheNextPostWorks) {
  auto big = prep(MsgType::Write, 0, 0, bufA.size());
  auto small = prep(MsgType::Write, 0, 0, 4096);
  a->post(*big);
  a->post(*small);
  a->cancel(*small);  // queued behind big (or already done: both are fine)
  a->cancel(*big);
  std::string msg;
  const Result rs = waitFor(*small, msg), rb2 = waitFor(*big, msg);
  EXPECT_TRUE(rs == Result::Success || rs == Result::InvalidUsage) << static_cast<int>(rs);
  EXPECT_TRUE(rb2 == Result::Success || rb2 == Result::InvalidUsage) << static_cast<int>(rb2);
  for (uint64_t i = 0; i < 4096; ++i) bufA[i] = pattern(3, i);
  a->post(*small);
  ASSERT_EQ(waitFor(*small, msg), Result::Success) << msg;
  for (uint64_t i = 0; i < 4096; ++i) ASSERT_EQ(bufB[i], pattern(3, i));
}

TEST_P(AgentTest, ARefusalAmongPipelinedWritesEndsOnlyItselfAndTheOthersLandInOrder) {
  // Writes are sent before the answers to the earlier ones (out_channel.hpp): the target's refusal of the
  // middle one (its region deregistered after the prepare) must fail only that one -- its payload drained,
  // the connection kept in step -- while the writes before and after it land with their notifications,
  // in post order.
  std::vector<unsigned char> other(1 << 20, 0);
  const Agent::Registration rb2 = b->registerMemory(other.data(), other.size());
  ASSERT_EQ(a->loadRemote(b->metadata()), "B");
  constexpr uint64_t kBytes = 256 << 10;
  std::vector<std::shared_ptr<Xfer>> xs;
  for (int round = 0; round < 3; ++round) {
    xs.push_back(prep(MsgType::Write, round * 2 * kBytes, round * 2 * kBytes, kBytes, "before-" + std::to_string(round)));
    const Range r{ra.id, rb2.id, round * 2 * kBytes + kBytes, 0, kBytes};
    const std::string n = "refused-" + std::to_string(round);
    xs.push_back(a->prepare(MsgType::Write, "B", std::span(&r, 1), {reinterpret_cast<const unsigned char*>(n.data()), n.size()}));
  }
  xs.push_back(prep(MsgType::Write, 6 * kBytes, 6 * kBytes, kBytes, "after"));
  b->deregister(rb2.id, rb2.generation);
  for (uint64_t i = 0; i < bufA.size(); ++i) bufA[i] = pattern(40, i);
  for (auto& x : xs) a->post(*x);  // none waited: all queued at once
  std::string msg;
  for (size_t k = 0; k < xs.size(); ++k) {
    const bool refused = k % 2 == 1 && k + 1 < xs.size();
    const Result r = waitFor(*xs[k], msg);
    if (refused) {
      EXPECT_EQ(r, Result::InvalidArgument) << "write " << k << ": " << msg;
      EXPECT_NE(msg.find("deregistered"), std::string::npos) << msg;
    } else {
      ASSERT_EQ(r, Result::Success) << "write " << k << ": " << msg;
    }
  }
  for (const uint64_t off : {0 * kBytes, 2 * kBytes, 4 * kBytes, 6 * kBytes})
    for (uint64_t i = 0; i < kBytes; i += 97) ASSERT_EQ(bufB[off + i], pattern(40, off + i)) << "offset " << off + i;
  std::vector<std::string> notes;
  for (int tries = 0; tries < 2000 && notes.size() < 4; ++tries) {
    std::string from;
    unsigned char m[64];
    size_t size = 0;
    bool got = false;
    ASSERT_TRUE(b->takeNotif(from, m, sizeof m, size, got));
    if (got) notes.emplace_back(reinterpret_cast<char*>(m), size);
    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(notes, (std::vector<std::string>{"before-0", "before-1", "before-2", "after"}));
}

TEST_P(AgentTest, APreparedNotificationArrivesAfterTheWritesPostedBeforeItAndCanBePostedAgain) {
  auto w = prep(MsgType::Write, 0, 0, bufA.size());
  const std::string text = "blocks 0-31 written";
  auto n = a->prepareNotif("B", {reinterpret_cast<const unsigned char*>(text.data()), text.size()});
  std::string msg;
  for (uint64_t round = 1; round <= 2; ++round) {
    for (uint64_t i = 0; i < bufA.size(); ++i) bufA[i] = pattern(20 + round, i);
    a->post(*w);
    a->post(*n);  // returns at once: queued behind the write
    ASSERT_EQ(waitFor(*n, msg), Result::Success) << msg;
    std::string from;
    unsigned char got[64];
    size_t size = 0;
    bool have = false;
    for (int tries = 0; tries < 1000 && !have; ++tries) {
      ASSERT_TRUE(b->takeNotif(from, got, sizeof got, size, have));
      if (!have) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(have);
    EXPECT_EQ(from, "A");
    EXPECT_EQ(std::string(reinterpret_cast<char*>(got), size), text);
    for (uint64_t i = 0; i < bufB.size(); i += 61) ASSERT_EQ(bufB[i], pattern(20 + round, i)) << "round " << round << " byte " << i;
    ASSERT_EQ(waitFor(*w, msg), Result::Success) << msg;
  }
  EXPECT_THROW(a->prepareNotif("nobody", {}), InvalidArgument);
  const std::vector<unsigned char> tooLong(kMaxNotif + 1, 1);
  EXPECT_THROW(a->prepareNotif("B", tooLong), InvalidArgument);
}

TEST_P(AgentTest, ADestroyedPeerFailsTransfersNamingItAndAReloadedOneWorks) {
  auto x = prep(MsgType::Write, 0, 0, 1 << 20);
  a->post(*x);
  std::string msg;
  ASSERT_EQ(waitFor(*x, msg), Result::Success) << msg;
  b.reset();  // the peer leaves
  a->post(*x);
  EXPECT_EQ(waitFor(*x, msg), Result::RemoteError);
  EXPECT_NE(msg.find("agent 'B'"), std::string::npos) << msg;
  // A new B (new incarnation, new address): the old transfer is refused, a new one works.
  AgentOptions o;
  o.secret = secret();
  o.listenAddress = "127.0.0.1:0";
  b = std::make_unique<Agent>("B", o);
  rb = b->registerMemory(bufB.data(), bufB.size());
  EXPECT_EQ(a->loadRemote(b->metadata()), "B");
  EXPECT_THROW(a->post(*x), InvalidArgument);
  auto y = prep(MsgType::Write, 0, 0, 1 << 20);
  for (uint64_t i = 0; i < (1 << 20); ++i) bufA[i] = pattern(11, i);
  a->post(*y);
  ASSERT_EQ(waitFor(*y, msg), Result::Success) << msg;
  for (uint64_t i = 0; i < (1 << 20); i += 101) ASSERT_EQ(bufB[i], pattern(11, i));
}

TEST_P(AgentTest, DestroyingTheAgentEndsItsRunningTransfers) {
  std::vector<std::shared_ptr<Xfer>> xs;
  for (int i = 0; i < 8; ++i) {
    xs.push_back(prep(MsgType::Write, 0, 0, bufA.size()));
    a->post(*xs.back());
  }
  a->stop();
  std::string msg;
  for (auto& x : xs) {
    const Result r = waitFor(*x, msg);
    EXPECT_TRUE(r == Result::Success || r == Result::RemoteError) << static_cast<int>(r);
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, AgentTest, ::testing::Values("auto", "off"),
                         [](const auto& info) { return std::string(info.param) == "auto" ? "window" : "tcp"; });

}  // namespace
}  // namespace hetccl::agent
