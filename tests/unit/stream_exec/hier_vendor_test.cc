// The hierarchical algorithms with the vendor library inside each domain (src/algo/hier/vendor_*.cc), run
// by the stream executor on the simulated GPU with a simulated vendor communicator per domain
// (sim_vendor.hpp): every collective in and out of place, on equal, unequal, three-domain and interleaved
// layouts, several types and operators, counts that do not divide by the domain sizes, compared exactly
// with the reference of tests/unit/algo/collective_case. Then the traffic: no byte crosses a ring between
// two ranks of one domain, the vendor carries the intra-domain share (the executor's count equals what
// the vendor saw), and the bytes on each cross-domain ring are the ones the algorithms' description
// implies (derived below from the partitions, independently of the planner's code).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ostream>
#include <thread>
#include <tuple>
#include <string>
#include <vector>

#include "bootstrap_harness.hpp"
#include "sim_gpu.hpp"
#include "sim_vendor.hpp"
#include "sim_world.hpp"
#include "stream_test_support.hpp"
#include "support/sanitizers.hpp"
#include "unit/algo/collective_case.hpp"

namespace hetccl::stream_exec {
namespace {

using algo::CollKind;
using bootstrap::testing::ScopedEnv;
using test::CollCase;
using test::Layout;
using test::SimWorld;
using test::kUnderThreadSanitizer;

class HierVendorTest : public test::SmallRingTest {};

const std::vector<Layout> kLayouts = {
    {"1+1", {0, 1}},
    {"2+2", {0, 0, 1, 1}},
    {"3+1", {0, 0, 0, 1}},
    {"2+2+2", {0, 0, 1, 1, 2, 2}},
    {"4+4", {0, 0, 0, 0, 1, 1, 1, 1}},
    {"6+2", {0, 0, 0, 0, 0, 0, 1, 1}},
    {"interleaved 0101", {0, 1, 0, 1}},
    {"interleaved 100110", {1, 0, 0, 1, 1, 0}},
};

// The traffic tests below loop over layouts in one test; under ThreadSanitizer (where they took 30-100 s
// each) they run equal, three-domain and interleaved layouts only, and the host-layout ones the first host
// layout only: the same threads and waits, the other layouts' arithmetic being checked by the normal and
// ASan builds (support/sanitizers.hpp).
bool layoutRunsHere(const Layout& layout) {
  return !kUnderThreadSanitizer || layout.name == "2+2" || layout.name == "2+2+2" || layout.name == "interleaved 100110";
}

struct TypeOp {
  DataType type;
  RedOpKind op;
};
// Avg and PreMulSum (their scaling and division are the planner's, the vendor only sums), an integer
// type with Max, and a product of half-width floats.
const TypeOp kReductions[] = {{DataType::Float32, RedOpKind::Sum},
                              {DataType::Int8, RedOpKind::Max},
                              {DataType::Float32, RedOpKind::Avg},
                              {DataType::Float64, RedOpKind::PreMulSum},
                              {DataType::Bfloat16, RedOpKind::Prod},
                              {DataType::Int32, RedOpKind::Avg},
                              {DataType::Uint8, RedOpKind::Min}};

bool reduces(CollKind k) { return k == CollKind::AllReduce || k == CollKind::Reduce || k == CollKind::ReduceScatter; }

/// Runs every collective of test::kEveryKind on `layout`: reducing ones with every entry of kReductions, the
/// others with one type per count; roots move over the ranks.
void runEveryCollective(SimWorld& world, const Layout& layout, const std::vector<size_t>& counts) {
  const int n = static_cast<int>(layout.domainOf.size());
  int index = 0;
  for (CollKind kind : test::kEveryKind)
    for (size_t count : counts)
      for (bool inPlace : {false, true})
        for (const TypeOp& to : kReductions) {
          const bool tiny = count > 0 && count < 10;
          if (!reduces(kind) && &to != &kReductions[tiny ? 1 : 0]) continue;  // int8 or float32
          CollCase c;
          c.kind = kind;
          c.count = count;
          c.type = to.type;
          c.op = to.op;
          c.inPlace = inPlace;
          c.root = (index++ * 5 + 1) % n;
          c.layout = layout;
          const std::string result = world.run(c);
          EXPECT_EQ(result, "") << layout.name << ": " << c.describe() << " (HETCCL_SIM_SEED=" << test::sim::seed()
                                << ")";
          if (!result.empty()) return;  // the world may be broken now: the next layout starts afresh
        }
}

/// Whether every rank handed work to its vendor communicator.
bool everyRankUsedTheVendor(SimWorld& world) {
  for (int r = 0; r < world.size(); ++r)
    if (world.domainComm(r).counters().totalBytes() == 0) return false;
  return true;
}

// One test per layout (a test for all of them ran ~280 s under ThreadSanitizer, against ctest's 300 s).
class HierVendorLayoutTest : public HierVendorTest, public ::testing::WithParamInterface<Layout> {};

TEST_P(HierVendorLayoutTest, EveryCollectiveIsExact) {
  const Layout& layout = GetParam();
  // 1+1 has no domain of several ranks: the rings' algorithms unless the hierarchical one is forced.
  for (const char* algo : {"auto", "hier"}) {
    if (layout.name != "1+1" && std::string(algo) == "hier") continue;
    ScopedEnv force("HETCCL_ALGO", algo);
    SimWorld world(layout, SimWorld::VendorDomains{});
    runEveryCollective(world, layout, {0, 1, 5, 40'001});
    if (layout.name != "1+1" || std::string(algo) == "hier") {
      EXPECT_TRUE(everyRankUsedTheVendor(world)) << layout.name << " (HETCCL_ALGO=" << algo << ")";
    }
  }
}

/// The chunked pipeline on layouts with a domain of several ranks, two and three domains; one test per
/// layout and count (2+2+2 with both counts in one test ran 135 s under ThreadSanitizer).
class HierVendorChunkTest : public HierVendorTest,
                            public ::testing::WithParamInterface<std::tuple<Layout, size_t>> {};

TEST_P(HierVendorChunkTest, PipelinedChunksAreExact) {
  const auto& [layout, count] = GetParam();
  // Chunks of a quarter of the message (HETCCL_GPU_MIN_CHUNK_BYTES below it): several vendor calls per
  // phase, the reduce-scatter of one chunk overlapping the exchange of the previous one.
  ScopedEnv minChunk("HETCCL_GPU_MIN_CHUNK_BYTES", "4096");
  SimWorld world(layout, SimWorld::VendorDomains{});
  runEveryCollective(world, layout, {count});
  EXPECT_TRUE(everyRankUsedTheVendor(world)) << layout.name;
}

std::string testNameOf(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Layouts, HierVendorLayoutTest, ::testing::ValuesIn(kLayouts),
                         [](const auto& info) { return testNameOf(info.param.name); });
INSTANTIATE_TEST_SUITE_P(Layouts, HierVendorChunkTest,
                         ::testing::Combine(::testing::Values(kLayouts[2], kLayouts[3], kLayouts[7]),
                                            ::testing::Values(size_t{40'001}, size_t{100'003})),
                         [](const auto& info) {
                           return testNameOf(std::get<0>(info.param).name) + "_count_" +
                                  std::to_string(std::get<1>(info.param));
                         });

// --- traffic ---

/// split(len, parts)[i]: the first len % parts parts one longer (the planner's even split).
size_t evenPart(size_t len, size_t parts, size_t i) { return len / parts + (i < len % parts ? 1 : 0); }
size_t evenBegin(size_t len, size_t parts, size_t i) {
  size_t b = 0;
  for (size_t k = 0; k < i; ++k) b += evenPart(len, parts, k);
  return b;
}
/// The vendor's blocks of `len` over n members: len / n each, the remainder on the last one.
size_t vendorBlockBegin(size_t len, size_t n, size_t k) { return k * (len / n); }
size_t vendorBlockLen(size_t len, size_t n, size_t k) { return k + 1 < n ? len / n : len - (n - 1) * (len / n); }
size_t overlap(size_t a, size_t aLen, size_t b, size_t bLen) {
  const size_t lo = std::max(a, b), hi = std::min(a + aLen, b + bLen);
  return hi > lo ? hi - lo : 0;
}

/// Bytes per ordered pair of ranks (sent[from][to]) that the description of each algorithm implies for
/// one call of `count` elements of `es` bytes, in a single pipeline chunk.
class ExpectedTraffic {
 public:
  ExpectedTraffic(const Layout& layout, size_t count, size_t es)
      : domainOf_(layout.domainOf), n_(static_cast<int>(domainOf_.size())), count_(count), es_(es),
        sent_(n_, std::vector<uint64_t>(n_, 0)) {
    numDomains_ = *std::max_element(domainOf_.begin(), domainOf_.end()) + 1;
    for (int d = 0; d < numDomains_; ++d) members_.push_back(membersOf(d));
  }
  const std::vector<std::vector<uint64_t>>& sent() const { return sent_; }

  /// All-reduce: every domain's member k holds vendor block k of the domain's partial sums; the pieces
  /// between all domains' block boundaries have one owner per domain; for each piece the owners split it
  /// evenly in D sub-pieces, sub-piece e finished by the owner in domain e: every owner sends sub-piece e
  /// to owner e, then owner e sends the finished sub-piece e to every other owner.
  void allReduce() {
    std::vector<size_t> bounds{count_};
    for (int d = 0; d < numDomains_; ++d)
      for (size_t k = 0; k < members_[d].size(); ++k) bounds.push_back(vendorBlockBegin(count_, members_[d].size(), k));
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    for (size_t b = 0; b + 1 < bounds.size(); ++b) {
      const size_t begin = bounds[b], len = bounds[b + 1] - begin;
      std::vector<int> owner(numDomains_);
      for (int d = 0; d < numDomains_; ++d) owner[d] = ownerIn(d, begin);
      for (int e = 0; e < numDomains_; ++e)
        for (int m = 0; m < numDomains_; ++m)
          if (m != e) {
            add(owner[m], owner[e], evenPart(len, numDomains_, e));  // my partial of sub-piece e to its finisher
            add(owner[e], owner[m], evenPart(len, numDomains_, e));  // the finished sub-piece e back
          }
    }
  }
  /// Reduce-scatter: in domain d of n members, the blocks of the F ranks outside d (rank order, `count`
  /// each) form a space of F * count elements split evenly into n shares; member k sends the domain's
  /// partial sums of its share to the ranks whose blocks it covers.
  void reduceScatter() { foreignShares(/*toOwners=*/true); }
  /// All-gather: the reverse: every rank sends its block to the members of the other domains whose shares
  /// cover it.
  void allGather() { foreignShares(/*toOwners=*/false); }
  /// Broadcast: for every other domain d of n members, vendor block k of the buffer goes from member
  /// k mod n_root of the root's domain to member k of d.
  void broadcast(int root) {
    const std::vector<int>& rootMembers = members_[domainOf_[root]];
    for (int d = 0; d < numDomains_; ++d) {
      if (d == domainOf_[root]) continue;
      const size_t n = members_[d].size();
      for (size_t k = 0; k < n; ++k) add(rootMembers[k % rootMembers.size()], members_[d][k], vendorBlockLen(count_, n, k));
    }
  }

 private:
  std::vector<int> membersOf(int d) const {
    std::vector<int> m;
    for (int r = 0; r < n_; ++r)
      if (domainOf_[r] == d) m.push_back(r);
    return m;
  }
  int ownerIn(int d, size_t x) const {
    const size_t n = members_[d].size();
    for (size_t k = 0; k < n; ++k)
      if (x >= vendorBlockBegin(count_, n, k) && x < vendorBlockBegin(count_, n, k) + vendorBlockLen(count_, n, k))
        return members_[d][k];
    return -1;
  }
  void add(int from, int to, size_t elems) { sent_[from][to] += elems * es_; }
  void foreignShares(bool toOwners) {
    for (int d = 0; d < numDomains_; ++d) {
      std::vector<int> foreign;
      for (int r = 0; r < n_; ++r)
        if (domainOf_[r] != d) foreign.push_back(r);
      const size_t n = members_[d].size(), space = foreign.size() * count_;
      for (size_t k = 0; k < n; ++k)
        for (size_t f = 0; f < foreign.size(); ++f) {
          const size_t bytes = overlap(evenBegin(space, n, k), evenPart(space, n, k), f * count_, count_);
          if (toOwners) add(members_[d][k], foreign[f], bytes);
          else add(foreign[f], members_[d][k], bytes);
        }
    }
  }

  std::vector<int> domainOf_;
  int n_, numDomains_ = 0;
  size_t count_, es_;
  std::vector<std::vector<int>> members_;
  std::vector<std::vector<uint64_t>> sent_;
};

/// What every rank's executor and vendor communicator counted, for the differences around one call.
struct Counts {
  std::vector<StreamExecutor::Traffic> traffic;
  std::vector<test::sim::VendorCounters> vendor;
};
Counts countsOf(SimWorld& world) {
  Counts c;
  for (int r = 0; r < world.size(); ++r) {
    c.traffic.push_back(world.exec(r).traffic());
    c.vendor.push_back(world.domainComm(r).counters());
  }
  return c;
}

/// One call of `kind` (`count` float32 elements, root n - 2) on `world`: the counters around it and the
/// traffic the algorithms' description implies for it.
struct TrafficRun {
  Counts before, after;
  ExpectedTraffic expected;
};
TrafficRun runForTraffic(SimWorld& world, CollKind kind, size_t count) {
  CollCase c;
  c.kind = kind;
  c.count = count;
  c.root = world.size() - 2;
  const Counts before = countsOf(world);
  const std::string result = world.run(c);
  EXPECT_EQ(result, "") << "HETCCL_SIM_SEED=" << test::sim::seed();
  TrafficRun t{before, countsOf(world), ExpectedTraffic(world.layout(), count, dataTypeSize(c.type))};
  if (kind == CollKind::AllReduce) t.expected.allReduce();
  if (kind == CollKind::ReduceScatter) t.expected.reduceScatter();
  if (kind == CollKind::AllGather) t.expected.allGather();
  if (kind == CollKind::Broadcast) t.expected.broadcast(c.root);
  return t;
}

/// The bytes crossing between domains in all, in closed form, for one call of `bytes`. All-reduce: the
/// owners of a piece of length P send P + (D-2) * (their sub-piece) each, 2 (D-1) P together, so 2 (D-1) N
/// in all. Broadcast: the buffer enters each other domain once, (D-1) N. Reduce-scatter: each rank's block
/// gets one partial sum from every other domain, all-gather sends each block into every other domain once:
/// (D-1) N per rank.
uint64_t crossDomainTotal(const Layout& layout, CollKind kind, uint64_t bytes) {
  const uint64_t numDomains = *std::max_element(layout.domainOf.begin(), layout.domainOf.end()) + 1;
  if (kind == CollKind::AllReduce) return 2 * (numDomains - 1) * bytes;
  if (kind == CollKind::ReduceScatter || kind == CollKind::AllGather) return (numDomains - 1) * layout.domainOf.size() * bytes;
  return (numDomains - 1) * bytes;  // broadcast
}

TEST_F(HierVendorTest, OnlyTheCrossDomainShareCrossesTheRings) {
  // One pipeline chunk (the message is below HETCCL_GPU_MIN_CHUNK_BYTES), so the partitions are the
  // whole buffer's.
  ScopedEnv minChunk("HETCCL_GPU_MIN_CHUNK_BYTES", "1M");
  ScopedEnv hierChunk("HETCCL_HIER_CHUNK_BYTES", "8M");
  constexpr size_t kCount = 40'001;
  for (const Layout& layout : kLayouts) {
    if (layout.name == "1+1") continue;  // no domain with several ranks: the rings' algorithms run
    if (!layoutRunsHere(layout)) continue;
    const int n = static_cast<int>(layout.domainOf.size());
    SimWorld world(layout, SimWorld::VendorDomains{});
    for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather, CollKind::Broadcast}) {
      SCOPED_TRACE(concat(layout.name, " ", algo::collKindName(kind)));
      const TrafficRun run = runForTraffic(world, kind, kCount);
      ASSERT_FALSE(HasFailure());
      const Counts& before = run.before;
      const Counts& after = run.after;
      const ExpectedTraffic& expected = run.expected;
      uint64_t crossing = 0;
      for (int r = 0; r < n; ++r) {
        const auto& t0 = before.traffic[r];
        const auto& t1 = after.traffic[r];
        for (int p = 0; p < n; ++p) {
          if (p == r) continue;
          const uint64_t sent = t1.ringSent[p] - t0.ringSent[p], received = t1.ringReceived[p] - t0.ringReceived[p];
          if (layout.domainOf[p] == layout.domainOf[r]) {
            EXPECT_EQ(sent, 0u) << "ring bytes from rank " << r << " to rank " << p << " of its own domain";
            EXPECT_EQ(received, 0u) << "ring bytes from rank " << p << " to rank " << r << " of its own domain";
          }
          EXPECT_EQ(sent, expected.sent()[r][p]) << "ring " << r << " -> " << p;
          EXPECT_EQ(received, expected.sent()[p][r]) << "ring " << p << " -> " << r;
          crossing += sent;
        }
        // The vendor carried the rest, and the executor counted what the vendor saw.
        const uint64_t vendorBytes = t1.domainCollectiveBytes - t0.domainCollectiveBytes;
        const uint64_t sawBytes = after.vendor[r].totalBytes() - before.vendor[r].totalBytes();
        EXPECT_GT(vendorBytes, 0u) << "rank " << r;
        EXPECT_EQ(vendorBytes, sawBytes) << "rank " << r;
        EXPECT_EQ(t1.domainCollectives - t0.domainCollectives, after.vendor[r].totalCalls() - before.vendor[r].totalCalls())
            << "rank " << r;
      }
      EXPECT_EQ(crossing, crossDomainTotal(layout, kind, kCount * sizeof(float)));
    }
  }
}

// --- between hosts: the vendor inside each domain, rings to other hosts mirrored by the ring proxies ---

struct HostLayout {
  Layout layout;
  std::vector<int> hostOf;
};
void PrintTo(const HostLayout& h, std::ostream* os) { *os << h.layout.name; }

const std::vector<HostLayout> kHostLayouts = {
    // vendor-homogeneous hosts, a domain per host (a mixed cluster)
    {{"2+2, a domain per host", {0, 0, 1, 1}}, {0, 0, 1, 1}},
    {{"4+4, a domain per host", {0, 0, 0, 0, 1, 1, 1, 1}}, {0, 0, 0, 0, 1, 1, 1, 1}},
    {{"2+2+2, a domain per host", {0, 0, 1, 1, 2, 2}}, {0, 0, 1, 1, 2, 2}},
    // both domains on both hosts: the vendor itself connects the hosts of a domain
    {{"2+2, domains across hosts", {0, 0, 1, 1}}, {0, 1, 0, 1}},
    // a domain on two hosts, one of them shared with the other domain
    {{"3+1, a domain on two hosts", {0, 0, 0, 1}}, {0, 0, 1, 1}},
};

bool hostLayoutRunsHere(const HostLayout& h) {  // see layoutRunsHere
  return !kUnderThreadSanitizer || h.layout.name == kHostLayouts[0].layout.name;
}

class HierVendorHostsTest : public HierVendorTest, public ::testing::WithParamInterface<HostLayout> {};

TEST_P(HierVendorHostsTest, EveryCollectiveIsExact) {
  const HostLayout& h = GetParam();
  SimWorld world(h.layout, SimWorld::VendorDomains{}, SimWorld::Hosts{h.hostOf});
  // Smaller calls on the larger layouts: 4+4 ran 163 s of ctest's 300 under ThreadSanitizer with 40,001.
  runEveryCollective(world, h.layout, {1, h.hostOf.size() > 4 ? size_t{10'007} : size_t{40'001}});
  EXPECT_TRUE(everyRankUsedTheVendor(world)) << h.layout.name;
  for (int r = 0; r < world.size(); ++r) EXPECT_TRUE(world.failuresOf(r).empty()) << world.failuresOf(r).front();
}

/// Vendor calls rank 0 made for one float32 all-reduce of `count` elements on `world`.
uint64_t vendorCallsOfOneAllReduce(SimWorld& world, size_t count) {
  CollCase c;
  c.kind = CollKind::AllReduce;
  c.count = count;
  const auto before = world.domainComm(0).counters().totalCalls();
  EXPECT_EQ(world.run(c), "") << world.layout().name;
  return world.domainComm(0).counters().totalCalls() - before;
}

// Between hosts a call is one chunk up to HETCCL_HIER_NET_MIN_CHUNK_BYTES (64M). With the floor and the
// ceiling at their smallest, several chunks (the vendor phases of one overlapping the network exchange of
// the previous one): a 400 KB all-reduce in 7 chunks of 16,384 elements instead of one, 6 more vendor
// reduce-scatters and 6 more all-gathers; every collective exact in such chunks. And the floor is the
// network one, not HETCCL_GPU_MIN_CHUNK_BYTES: a 4 MB all-reduce with a 2 MiB floor is 2 chunks (it would be
// 5 of a quarter each with the pipeline's 64 KiB floor).
TEST_F(HierVendorTest, BetweenHostsChunksHaveTheNetworkFloorAndAreExact) {
  constexpr size_t kSmall = 100'003, kLarge = 1'000'003;
  ScopedEnv pipelineFloor("HETCCL_GPU_MIN_CHUNK_BYTES", "64K");  // what must not count between hosts
  for (const HostLayout* layout : {&kHostLayouts[0], &kHostLayouts[3]}) {
    if (!hostLayoutRunsHere(*layout)) continue;
    const HostLayout& h = *layout;
    uint64_t oneChunkSmall = 0, oneChunkLarge = 0;
    {
      SimWorld world(h.layout, SimWorld::VendorDomains{}, SimWorld::Hosts{h.hostOf});
      oneChunkSmall = vendorCallsOfOneAllReduce(world, kSmall);
      oneChunkLarge = vendorCallsOfOneAllReduce(world, kLarge);
    }
    {
      ScopedEnv networkFloor("HETCCL_HIER_NET_MIN_CHUNK_BYTES", "2M");
      SimWorld world(h.layout, SimWorld::VendorDomains{}, SimWorld::Hosts{h.hostOf});
      EXPECT_EQ(vendorCallsOfOneAllReduce(world, kLarge), oneChunkLarge + 2) << h.layout.name;
    }
    ScopedEnv floor("HETCCL_HIER_NET_MIN_CHUNK_BYTES", "64K");
    ScopedEnv ceiling("HETCCL_HIER_CHUNK_BYTES", "64K");
    SimWorld world(h.layout, SimWorld::VendorDomains{}, SimWorld::Hosts{h.hostOf});
    EXPECT_EQ(vendorCallsOfOneAllReduce(world, kSmall), oneChunkSmall + 12) << h.layout.name;
    if (&h != &kHostLayouts[0]) continue;  // every collective on one layout (ThreadSanitizer's time)
    runEveryCollective(world, h.layout, {40'001});  // 3 chunks of float32, 1-5 of the other types
    EXPECT_TRUE(everyRankUsedTheVendor(world)) << h.layout.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Hosts, HierVendorHostsTest, ::testing::ValuesIn(kHostLayouts),
                         [](const auto& info) { return testNameOf(info.param.layout.name); });

// What crosses the network between hosts is what crosses the rings between ranks of different hosts, and
// with a domain per host that is only the cross-domain share (ExpectedTraffic): the proxies' own counts of
// the bytes they put on the wire and took off it, per peer, equal the planned ring bytes to peers on other
// hosts and are zero for peers of the same host.
TEST_F(HierVendorTest, BetweenHostsOnlyTheCrossDomainShareCrossesTheNetwork) {
  ScopedEnv minChunk("HETCCL_GPU_MIN_CHUNK_BYTES", "1M");
  ScopedEnv hierChunk("HETCCL_HIER_CHUNK_BYTES", "8M");
  constexpr size_t kCount = 40'001;
  for (const HostLayout& h : {kHostLayouts[0], kHostLayouts[2], kHostLayouts[3]}) {
    if (!hostLayoutRunsHere(h)) continue;
    const Layout& layout = h.layout;
    const int n = static_cast<int>(layout.domainOf.size());
    SimWorld world(layout, SimWorld::VendorDomains{}, SimWorld::Hosts{h.hostOf});
    for (CollKind kind : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather, CollKind::Broadcast}) {
      SCOPED_TRACE(concat(layout.name, " ", algo::collKindName(kind)));
      const TrafficRun run = runForTraffic(world, kind, kCount);
      ASSERT_FALSE(HasFailure());
      const Counts& before = run.before;
      const Counts& after = run.after;
      const ExpectedTraffic& expected = run.expected;
      uint64_t onTheWire = 0;
      for (int r = 0; r < n; ++r) {
        const auto& t0 = before.traffic[r];
        const auto& t1 = after.traffic[r];
        for (int p = 0; p < n; ++p) {
          if (p == r) continue;
          const uint64_t ring = t1.ringSent[p] - t0.ringSent[p];
          const uint64_t wireOut = t1.netSent[p] - t0.netSent[p], wireIn = t1.netReceived[p] - t0.netReceived[p];
          EXPECT_EQ(ring, expected.sent()[r][p]) << "ring " << r << " -> " << p;
          const bool otherHost = h.hostOf[p] != h.hostOf[r];
          EXPECT_EQ(wireOut, otherHost ? expected.sent()[r][p] : 0u) << "wire " << r << " -> " << p;
          EXPECT_EQ(wireIn, otherHost ? expected.sent()[p][r] : 0u) << "wire " << p << " -> " << r;
          onTheWire += wireOut;
        }
        EXPECT_GT(t1.domainCollectiveBytes - t0.domainCollectiveBytes, 0u) << "rank " << r;
      }
      if (layout.name.find("a domain per host") != std::string::npos) {  // every cross-domain byte crosses hosts
        EXPECT_EQ(onTheWire, crossDomainTotal(layout, kind, kCount * sizeof(float)));
      }
    }
  }
}

TEST_F(HierVendorTest, WithoutDomainCommunicatorsNoVendorCallIsPlanned) {
  SimWorld world({"2+2", {0, 0, 1, 1}});
  CollCase c;
  c.kind = CollKind::AllReduce;
  c.count = 40'001;
  ASSERT_EQ(world.run(c), "");
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(world.exec(r).traffic().domainCollectives, 0u);
}

// All-to-all and point-to-point: blocks between members of a domain go through the vendor (one exchange
// per call), blocks between domains over the rings, each exactly once.
TEST_F(HierVendorTest, AllToAllAndPointToPointKeepDomainBlocksOffTheRings) {
  constexpr size_t kCount = 5'003;
  for (const Layout& layout : kLayouts) {
    if (layout.name == "1+1") continue;  // no domain with several ranks: the rings' algorithms run
    const int n = static_cast<int>(layout.domainOf.size());
    SimWorld world(layout, SimWorld::VendorDomains{});
    for (CollKind kind : {CollKind::AllToAll, test::kSendRecvRing}) {
      SCOPED_TRACE(concat(layout.name, " ", kind == CollKind::AllToAll ? "alltoall" : "send/recv ring"));
      CollCase c;
      c.kind = kind;
      c.count = kCount;
      const Counts before = countsOf(world);
      ASSERT_EQ(world.run(c), "") << "HETCCL_SIM_SEED=" << test::sim::seed();
      const Counts after = countsOf(world);
      const uint64_t block = kCount * dataTypeSize(c.type);
      for (int r = 0; r < n; ++r) {
        uint64_t domainBlocks = 0;
        for (int p = 0; p < n; ++p) {
          if (p == r) continue;
          // The ring pattern: rank r sends to r+1 only.
          const bool talks = kind == CollKind::AllToAll || p == (r + 1) % n;
          const uint64_t sent = after.traffic[r].ringSent[p] - before.traffic[r].ringSent[p];
          const bool sameDomain = layout.domainOf[p] == layout.domainOf[r];
          EXPECT_EQ(sent, talks && !sameDomain ? block : 0u) << "ring " << r << " -> " << p;
          const bool hears = kind == CollKind::AllToAll || r == (p + 1) % n;
          if ((talks || hears) && sameDomain) domainBlocks += block;
        }
        // The vendor moved this rank's blocks with members of its domain, and nothing else.
        EXPECT_EQ(after.vendor[r].totalBytes() - before.vendor[r].totalBytes() > 0, domainBlocks > 0) << "rank " << r;
      }
    }
  }
}

// A domain peer that never calls: after HETCCL_TIMEOUT the executor reports the stall, releases its ring
// waits and aborts the domain communicator, whose waiting vendor call then ends: nothing stays queued.
// (Without the abort the domain stream stays inside the vendor call and this test fails.)
TEST_F(HierVendorTest, AStalledDomainPeerTimesOutAndReleasesTheStreams) {
  ScopedEnv shortTimeout("HETCCL_TIMEOUT", "1");
  SimWorld world({"2+2", {0, 0, 1, 1}}, SimWorld::VendorDomains{});
  std::vector<float> buf(100'000, 1.0f);
  algo::CollOp op;
  op.sendbuff = op.recvbuff = buf.data();
  op.count = buf.size();
  world.exec(0).enqueue({&op, 1}, world.userStream(0));  // rank 1, its domain peer, never calls
  world.exec(0).drain();  // returns once the monitor reported the stall
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (test::sim::pendingOps() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(test::sim::pendingOps(), 0u) << "the released streams did not finish\n" << test::sim::dump();
  const auto reports = world.failuresOf(0);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find("HETCCL_TIMEOUT"), std::string::npos) << reports[0];
  // Whatever the executor did, nothing of this test may stay queued on the process's device.
  for (int r = 0; r < world.size(); ++r) world.domainComm(r).abort();
  EXPECT_TRUE(test::sim::waitIdle(std::chrono::seconds(10)));
}

}  // namespace
}  // namespace hetccl::stream_exec
