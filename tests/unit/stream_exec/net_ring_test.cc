// The stream pipeline between hosts on the simulated GPU: ranks act as ranks of several hosts, their rings
// to other hosts are private and mirrored by the executors' ring proxies (net_ring_proxy.hpp) over real
// tcp connections on loopback. Every collective on layouts that mix shared rings (one host) and mirrored
// ones, in and out of place, pieces through two small slots (credits must come back before a slot is
// reused), graph replays, a call-stamp mismatch reported on both ranks, a peer whose connections die named,
// and the proxy's record codec.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <ostream>
#include <thread>

#include "bootstrap_harness.hpp"
#include "sim_gpu.hpp"
#include "sim_world.hpp"
#include "exec/pipeline/net_ring_wire.hpp"
#include "stream_test_support.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::CollKind;
using test::CollCase;
using test::CollCaseRounds;
using test::Layout;
using test::SimWorld;

class NetRingTest : public test::SmallRingTest {};

struct HostLayout {
  Layout layout;
  std::vector<int> hostOf;
};

void PrintTo(const HostLayout& h, std::ostream* os) { *os << h.layout.name; }

std::string nameOf(const ::testing::TestParamInfo<HostLayout>& info) {
  std::string n;
  for (char ch : info.param.layout.name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return n;
}

class NetRingLayoutTest : public NetRingTest, public ::testing::WithParamInterface<HostLayout> {};

TEST_P(NetRingLayoutTest, EveryCollectiveIsExact) {
  const HostLayout& h = GetParam();
  SimWorld world(h.layout, SimWorld::Hosts{h.hostOf});
  test::expectEveryKindExact(world);
  for (int r = 0; r < world.size(); ++r) EXPECT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
}

INSTANTIATE_TEST_SUITE_P(
    Hosts, NetRingLayoutTest,
    ::testing::Values(HostLayout{{"2 ranks on 2 hosts", {0, 1}}, {0, 1}},
                      HostLayout{{"3 ranks on 3 hosts", {0, 1, 2}}, {0, 1, 2}},
                      // a domain per host: shared rings inside a host, mirrored ones between hosts
                      HostLayout{{"2+2, a domain per host", {0, 0, 1, 1}}, {0, 0, 1, 1}},
                      // both domains on both hosts
                      HostLayout{{"2+2, domains across hosts", {0, 0, 1, 1}}, {0, 1, 0, 1}}),
    nameOf);

TEST_F(NetRingTest, ALargeAllReduceCyclesTheSlotsManyTimes) {
  SimWorld world({"2", {0, 1}}, SimWorld::Hosts{{0, 1}});
  for (bool inPlace : {false, true}) {
    CollCase c;
    c.kind = CollKind::AllReduce;
    c.count = 1'000'003;  // 4 MB: about 32 pieces each way per phase through 2 slots of 64 KiB
    c.inPlace = inPlace;
    c.layout = world.layout();
    EXPECT_EQ(world.run(c), "") << c.describe();
  }
}

TEST_F(NetRingTest, GraphReplaysAcrossHostsAreExact) {
  SimWorld world({"2", {0, 1}}, SimWorld::Hosts{{0, 1}});
  CollCase c;
  c.layout = world.layout();
  c.count = 40'001;
  CollCaseRounds rounds(c);
  std::vector<test::sim::Graph*> graphs;
  for (int r = 0; r < 2; ++r) {
    test::sim::beginCapture(world.userStream(r));
    world.exec(r).enqueue(rounds.group(r), world.userStream(r));
    graphs.push_back(test::sim::endCapture(world.userStream(r)));
  }
  for (int round = 1; round <= 4; ++round) {
    rounds.refill(round);
    for (int r = 0; r < 2; ++r) test::sim::launch(graphs[r], world.userStream(r));
    for (int r = 0; r < 2; ++r) test::sim::plugin().streamSynchronize(world.userStream(r));
    ASSERT_EQ(rounds.check(), "") << "replay " << round;
  }
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
}

// The receiver's monitor finds the stamp; its proxy forwards the report, so the sender names both too.
TEST_F(NetRingTest, MismatchedCountsFailOnBothHostsNamingBothStamps) {
  SimWorld world({"2", {0, 1}}, SimWorld::Hosts{{0, 1}});
  const std::vector<size_t> counts = {10'000, 20'000};
  std::vector<std::vector<float>> bufs(2);
  auto errors = test::runRanks(2, [&](int r) {
    bufs[r].assign(4 * counts[r] * 2, 1.0f);
    algo::CollOp op;
    op.sendbuff = op.recvbuff = bufs[r].data();
    op.count = counts[r];
    world.exec(r).enqueue({&op, 1}, world.userStream(r));
    world.exec(r).drain();  // returns once done or released
  });
  test::rethrowFirst(errors);
  std::vector<std::vector<std::string>> reports(2);
  test::waitUntil([&] {
    for (int r = 0; r < 2; ++r)
      if ((reports[r] = world.failuresOf(r)).empty()) return false;
    return true;
  });
  EXPECT_TRUE(test::waitUntil([] { return test::sim::pendingOps() == 0; })) << "streams left waiting\n" << test::sim::dump();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(reports[r].size(), 1u) << "rank " << r;
    EXPECT_NE(reports[r][0].find("disagree"), std::string::npos) << reports[r][0];
    EXPECT_NE(reports[r][0].find("40000 bytes on this ring"), std::string::npos) << reports[r][0];
    EXPECT_NE(reports[r][0].find("80000 bytes on this ring"), std::string::npos) << reports[r][0];
  }
}

// Rank 1 goes away (its connections close) while rank 0 waits for it in an all-reduce: rank 0's proxy
// reports the lost connection naming rank 1 and its host, and the released streams finish.
TEST_F(NetRingTest, APeerWhoseConnectionsCloseIsNamed) {
  SimWorld world({"2", {0, 1}}, SimWorld::Hosts{{0, 1}});
  std::vector<float> buf(100'000, 1.0f);
  algo::CollOp op;
  op.sendbuff = op.recvbuff = buf.data();
  op.count = buf.size();
  world.exec(0).enqueue({&op, 1}, world.userStream(0));
  world.vanish(1);
  world.exec(0).drain();  // returns once the failure released the group
  EXPECT_TRUE(test::waitUntil([] { return test::sim::pendingOps() == 0; })) << "streams left waiting\n" << test::sim::dump();
  auto reports = world.failuresOf(0);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("rank 1"), std::string::npos) << reports[0];
  EXPECT_NE(reports[0].find("simhost1"), std::string::npos) << reports[0];
}

TEST(NetRingWire, RecordsRoundTripAndGarbageIsRejected) {
  NetRingRecord r;
  r.kind = NetRingKind::Piece;
  r.slot = 3;
  r.bytes = 65536;
  for (int w = 0; w < 8; ++w) r.words[w] = 0x0102030405060708ull * (w + 1);
  unsigned char bytes[kNetRingRecordBytes];
  encodeNetRingRecord(r, bytes);
  EXPECT_EQ(bytes[0], 0x50);  // little-endian magic "HNRP"
  NetRingRecord back;
  std::string problem;
  ASSERT_TRUE(decodeNetRingRecord(bytes, back, problem)) << problem;
  EXPECT_EQ(back.kind, r.kind);
  EXPECT_EQ(back.slot, r.slot);
  EXPECT_EQ(back.bytes, r.bytes);
  for (int w = 0; w < 8; ++w) EXPECT_EQ(back.words[w], r.words[w]);

  auto rejects = [&](size_t at, unsigned char value, const char* why) {
    unsigned char bad[kNetRingRecordBytes];
    std::memcpy(bad, bytes, sizeof bad);
    bad[at] = value;
    std::string p;
    EXPECT_FALSE(decodeNetRingRecord(bad, back, p)) << why;
    EXPECT_FALSE(p.empty()) << why;
  };
  rejects(0, 0x51, "magic");
  rejects(4, 2, "version");
  rejects(6, 9, "kind");
  rejects(6, 0, "kind 0");
  rejects(12, 1, "reserved");
  // A credit that announces a payload.
  r.kind = NetRingKind::Credit;
  encodeNetRingRecord(r, bytes);
  EXPECT_FALSE(decodeNetRingRecord(bytes, back, problem));
  r.bytes = 0;
  encodeNetRingRecord(r, bytes);
  EXPECT_TRUE(decodeNetRingRecord(bytes, back, problem)) << problem;
}

}  // namespace
}  // namespace hetccl::stream_exec
