// Pure planner checks (no transport): both ends of every connection agree on message sizes and order,
// dependencies only point backwards, scratch stays in bounds, pipelining and the hierarchical traffic
// pattern have the intended shape, and bad arguments are rejected.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "algo/dep_tracker.hpp"
#include "algo/planner.hpp"
#include "algo/selection.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::algo {
namespace {

using test::Layout;
using test::standardLayouts;

// Planning never dereferences buffers, so fake distinct addresses are enough.
CollOp fakeOp(CollKind kind, size_t count, int nranks, int rank) {
  CollOp op;
  op.kind = kind;
  op.count = count;
  op.type = DataType::Float32;
  op.sendbuff = reinterpret_cast<const void*>(uintptr_t{1} << 32);
  op.recvbuff = reinterpret_cast<void*>(uintptr_t{1} << 36);
  op.root = nranks - 1;
  if (kind == CollKind::AllToAllv)
    for (int p = 0; p < nranks; ++p) {
      op.sendcounts.push_back(count + p + rank);
      op.sdispls.push_back(p * 3 * count + 10 * p);
      op.recvcounts.push_back(count + rank + p);
      op.rdispls.push_back(p * 3 * count + 10 * p);
    }
  return op;
}

/// Message sizes each rank sends to / receives from each peer, in schedule order.
using Streams = std::map<std::pair<int, int>, std::vector<uint64_t>>;

void checkSchedulesMatch(const Layout& layout, CollKind kind, size_t count, const Tuning& tuning) {
  const int n = static_cast<int>(layout.domainOf.size());
  Streams sent, received;
  for (int r = 0; r < n; ++r) {
    const CollOp op = fakeOp(kind, count, n, r);
    const Schedule s = plan(Topology{r, n, layout.domainOf}, {&op, 1}, tuning);
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      for (uint32_t d : s.depsOf(st)) ASSERT_LT(d, i) << "step " << i << " depends on a later step";
      ASSERT_GT(st.bytes, 0u);
      for (const Location& l : {st.src, st.dst}) {
        if (l.space == Location::Space::Scratch) {
          ASSERT_LE(l.addr + st.bytes, s.scratchBytes);
        }
      }
      if (st.kind == StepKind::Send) sent[{r, st.peer}].push_back(st.bytes);
      if (st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce) received[{st.peer, r}].push_back(st.bytes);
    }
  }
  EXPECT_EQ(sent, received) << collKindName(kind) << " layout " << layout.name << " count " << count << " algo "
                            << algoChoiceName(tuning.algo);
}

TEST(Planner, BothEndsOfEveryConnectionAgree) {
  for (const Layout& layout : standardLayouts())
    for (CollKind kind : {CollKind::AllReduce, CollKind::Broadcast, CollKind::Reduce, CollKind::AllGather,
                          CollKind::ReduceScatter, CollKind::AllToAll, CollKind::AllToAllv})
      for (AlgoChoice algo : {AlgoChoice::Auto, AlgoChoice::Ring, AlgoChoice::Tree, AlgoChoice::RecursiveDoubling,
                              AlgoChoice::Hier})
        for (size_t count : {0, 3, 1000}) {
          Tuning t;
          t.algo = algo;
          t.chunkBytes = 400;
          checkSchedulesMatch(layout, kind, count, t);
        }
}

/// Rank 0's all-reduce of `count` floats as planned: its sends, the peers it sends to, its vendor steps.
struct PlanShape {
  int sends = 0, vendorSteps = 0;
  size_t peers = 0;
};
PlanShape allReduceShape(const Topology& topo, size_t count, const Tuning& t) {
  const CollOp op = fakeOp(CollKind::AllReduce, count, topo.nranks, topo.rank);
  std::set<int> peers;
  PlanShape shape;
  for (const Step& st : plan(topo, {&op, 1}, t).steps) {
    shape.vendorSteps += st.kind == StepKind::DomainCollective;
    if (st.kind != StepKind::Send) continue;
    ++shape.sends;
    peers.insert(st.peer);
  }
  shape.peers = peers.size();
  return shape;
}

// The stream pipeline's auto all-reduce up to HETCCL_SMALL_BYTES (Tuning::smallAllReduceByDoubling) is
// recursive doubling over every rank, whatever the domains and whether the vendor is inside them
// (measured 1.45-1.6x faster than the hierarchical plans there: bench/results/algo_sweep_2026-11-27);
// above it, and in the host engine (flag off) at every size, hierarchical across domains. Told apart by
// the plans' shape: on 2+2, recursive doubling is 2 sends per rank and no vendor step; the hierarchical
// plan without the vendor sends more often (domain reduce-scatter, cross-domain reduction, domain
// all-gather), with the vendor it has vendor steps. A forced HETCCL_ALGO=hier keeps the hierarchical plan.
TEST(Planner, SmallAllReduceAcrossDomainsIsRecursiveDoublingOnThePipeline) {
  auto shapeOf = [](size_t count, bool vendor, AlgoChoice algo, bool pipeline) {
    Topology topo{0, 4, {0, 0, 1, 1}};
    topo.domainCollectives = vendor;
    Tuning t;
    t.algo = algo;
    t.smallAllReduceByDoubling = pipeline;
    return allReduceShape(topo, count, t);
  };
  auto hierarchical = [](const PlanShape& s, bool vendor) { return vendor ? s.vendorSteps > 0 : s.sends > 2; };
  const size_t small = Tuning{}.smallBytes / sizeof(float), large = small + 1;
  for (bool vendor : {false, true}) {
    for (size_t count : {size_t{2}, small}) {
      const PlanShape s = shapeOf(count, vendor, AlgoChoice::Auto, true);
      EXPECT_EQ(s.sends, 2) << count << " floats, vendor " << vendor;
      EXPECT_EQ(s.vendorSteps, 0) << count << " floats, vendor " << vendor;
      EXPECT_TRUE(hierarchical(shapeOf(count, vendor, AlgoChoice::Auto, false), vendor)) << "host engine, " << count;
    }
    EXPECT_TRUE(hierarchical(shapeOf(large, vendor, AlgoChoice::Auto, true), vendor)) << "vendor " << vendor;
    EXPECT_TRUE(hierarchical(shapeOf(2, vendor, AlgoChoice::Hier, true), vendor)) << "vendor " << vendor;
  }
}

// Host calls across domains of one rank each (Tuning::oneRankDomainsAsOneDomain) plan an all-reduce as
// one domain would: up to HETCCL_SMALL_BYTES recursive doubling (on two ranks one exchange: a single send
// each; on four, log2(4) = 2 sends), above it the ring (rank 0 sends only to its successor). With a domain
// of two ranks, or the flag off, the hierarchical plan at every size: more sends, to every other rank.
TEST(Planner, AllReduceAcrossOneRankDomainsIsPlannedAsOneDomainOnHostCalls) {
  auto shapeOf = [](const std::vector<int>& domainOf, size_t count, const Tuning& t) {
    return allReduceShape(Topology{0, static_cast<int>(domainOf.size()), domainOf}, count, t);
  };
  const Tuning host = Tuning::fromConfig();
  EXPECT_TRUE(host.oneRankDomainsAsOneDomain);
  EXPECT_FALSE(host.smallAllReduceByDoubling);
  Tuning off = host;
  off.oneRankDomainsAsOneDomain = false;
  const size_t small = host.smallBytes / sizeof(float), large = small + 1000;
  for (size_t count : {size_t{1000}, small}) {
    EXPECT_EQ(shapeOf({0, 1}, count, host).sends, 1) << count;
    EXPECT_EQ(shapeOf({0, 1, 2, 3}, count, host).sends, 2) << count;
    EXPECT_GT(shapeOf({0, 1}, count, off).sends, 1) << count;
    EXPECT_GT(shapeOf({0, 1, 2, 3}, count, off).sends, 2) << count;
    EXPECT_GT(shapeOf({0, 0, 1, 1}, count, host).sends, 2) << count;
  }
  for (size_t count : {large, size_t{4} << 20}) {
    EXPECT_EQ(shapeOf({0, 1, 2, 3}, count, host).peers, 1u) << count;  // the ring
    EXPECT_EQ(shapeOf({0, 1, 2, 3}, count, off).peers, 3u) << count;   // the hierarchical plan
    EXPECT_EQ(shapeOf({0, 0, 1, 1}, count, host).peers, shapeOf({0, 0, 1, 1}, count, off).peers) << count;
  }
}

// From 8 ranks of one domain (or of one rank each) host calls take the tree above HETCCL_SMALL_BYTES up to
// 1 MiB, from 12 ranks up to 4 MiB (algo::treeAllReduceMaxBytes), then the ring. Told apart by rank 0's
// plan: as the tree's root it broadcasts to log2(n) children (8 ranks: 3 peers, 12: 4) where the ring
// sends only to its successor; below 8 ranks the ring. The stream pipeline's tuning keeps the ring.
TEST(Planner, ManyRanksTakeTheTreeAboveSmallBytesOnHostCalls) {
  const Tuning host = Tuning::fromConfig();
  auto peersOf = [](int n, bool oneRankDomains, size_t bytes, const Tuning& t) {
    std::vector<int> domainOf(n, 0);
    if (oneRankDomains)
      for (int r = 0; r < n; ++r) domainOf[r] = r;
    return allReduceShape(Topology{0, n, domainOf}, bytes / sizeof(float), t).peers;
  };
  Tuning pipeline = host;
  pipeline.treeForManyRanks = false;
  const size_t k = 1024;
  for (bool oneRankDomains : {false, true}) {
    EXPECT_EQ(peersOf(8, oneRankDomains, 128 * k, host), 3u) << oneRankDomains;
    EXPECT_EQ(peersOf(8, oneRankDomains, 1024 * k, host), 3u) << oneRankDomains;
    EXPECT_EQ(peersOf(8, oneRankDomains, 1024 * k + 4, host), 1u) << oneRankDomains;
    EXPECT_EQ(peersOf(12, oneRankDomains, 4096 * k, host), 4u) << oneRankDomains;
    EXPECT_EQ(peersOf(12, oneRankDomains, 4096 * k + 4, host), 1u) << oneRankDomains;
    EXPECT_EQ(peersOf(7, oneRankDomains, 128 * k, host), 1u) << oneRankDomains;
    EXPECT_EQ(peersOf(8, false, 128 * k, pipeline), 1u);
  }
  EXPECT_EQ(treeAllReduceMaxBytes(4), 0u);
  EXPECT_EQ(treeAllReduceMaxBytes(16), 4096 * k);
}

// HETCCL_TUNING_FILE's bands (Tuning::allReduceBands) come before every built-in rule under auto, not under
// a forced algorithm; sizes above the last band keep the built-in rules.
TEST(Planner, TuningFileBandsComeFirstUnderAuto) {
  Tuning t = Tuning::fromConfig();
  t.allReduceBands = {TuningBand{256 * 1024, AlgoChoice::Tree}, TuningBand{1 << 20, AlgoChoice::RecursiveDoubling}};
  const Topology four = Topology::singleDomain(0, 4);
  const Topology twoByTwo{0, 4, {0, 0, 1, 1}};
  EXPECT_EQ(chooseAllReduce(four, 8, t), AlgoChoice::Tree);
  EXPECT_EQ(chooseAllReduce(four, 256 * 1024, t), AlgoChoice::Tree);
  EXPECT_EQ(chooseAllReduce(four, 256 * 1024 + 1, t), AlgoChoice::RecursiveDoubling);
  EXPECT_EQ(chooseAllReduce(twoByTwo, 1 << 20, t), AlgoChoice::RecursiveDoubling);
  EXPECT_EQ(chooseAllReduce(four, (1 << 20) + 1, t), AlgoChoice::Ring);
  EXPECT_EQ(chooseAllReduce(twoByTwo, (1 << 20) + 1, t), AlgoChoice::Hier);
  EXPECT_NE(describeChoice(four, CollKind::AllReduce, 8, t).find("tree: reduce to one rank, broadcast [HETCCL_TUNING_FILE]"),
            std::string::npos);
  EXPECT_EQ(describeChoice(four, CollKind::AllReduce, (1 << 20) + 1, t).find("HETCCL_TUNING_FILE"), std::string::npos);
  t.algo = AlgoChoice::Ring;
  EXPECT_EQ(chooseAllReduce(four, 8, t), AlgoChoice::Ring);
  // The schedule follows the choice (told apart by rank 1's sends).
  t.algo = AlgoChoice::Auto;
  const CollOp op = fakeOp(CollKind::AllReduce, 1000, 4, 1);
  int sends = 0;
  for (const Step& st : plan(Topology::singleDomain(1, 4), {&op, 1}, t).steps) sends += st.kind == StepKind::Send;
  EXPECT_EQ(sends, 1);  // rank 1 is a leaf of the tree: one send (its contribution up), where doubling sends 2
}

TEST(Planner, CountZeroIsEmpty) {
  const CollOp op = fakeOp(CollKind::AllReduce, 0, 4, 0);
  EXPECT_TRUE(plan(Topology::singleDomain(0, 4), {&op, 1}, Tuning{}).steps.empty());
}

TEST(Planner, RingPipelinesChunksIndependently) {
  Tuning t;
  t.algo = AlgoChoice::Ring;
  t.chunkBytes = 64;  // 16 floats
  const CollOp op = fakeOp(CollKind::AllReduce, 4 * 16 * 8, 4, 1);
  const Schedule s = plan(Topology::singleDomain(1, 4), {&op, 1}, t);
  size_t checked = 0;
  for (const Step& st : s.steps) {
    if (st.kind != StepKind::Send) continue;
    for (uint32_t d : s.depsOf(st)) {
      // A send waits only for the step that last wrote exactly its chunk (load, reduce or receive).
      const Step& dep = s.steps[d];
      EXPECT_EQ(dep.dst, st.src);
      EXPECT_EQ(dep.bytes, st.bytes);
      ++checked;
    }
    EXPECT_LE(s.depsOf(st).size(), 1u);
  }
  EXPECT_GT(checked, 0u);
}

TEST(Planner, HierKeepsEveryRankCrossDomainLinkBusy) {
  const Layout layout{"4+4", {0, 0, 0, 0, 1, 1, 1, 1}};
  const size_t count = 8000;
  for (int r = 0; r < 8; ++r) {
    const CollOp op = fakeOp(CollKind::AllReduce, count, 8, r);
    Tuning t;
    t.algo = AlgoChoice::Hier;
    const Schedule s = plan(Topology{r, 8, layout.domainOf}, {&op, 1}, t);
    uint64_t crossBytes = 0;
    for (const Step& st : s.steps)
      if (st.kind == StepKind::Send && layout.domainOf[st.peer] != layout.domainOf[r]) crossBytes += st.bytes;
    EXPECT_EQ(crossBytes, count / 4 * sizeof(float)) << "rank " << r;  // its shard, once
  }
}

TEST(Planner, UnequalDomainsSplitPiecesAtTheUnionOfBoundaries) {
  const Layout layout{"3+1", {0, 0, 0, 1}};
  const size_t count = 9;  // domain 0 shards: [0,3) [3,6) [6,9); domain 1: [0,9)
  uint64_t lonelyRecv = 0;
  for (int r = 0; r < 4; ++r) {
    const CollOp op = fakeOp(CollKind::AllReduce, count, 4, r);
    Tuning t;
    t.algo = AlgoChoice::Hier;
    const Schedule s = plan(Topology{r, 4, layout.domainOf}, {&op, 1}, t);
    for (const Step& st : s.steps)
      if (r == 3 && (st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce)) lonelyRecv += st.bytes;
  }
  // Rank 3 owns every piece; of each piece it receives a partial of the part it finishes and the
  // finished rest: every element once.
  EXPECT_EQ(lonelyRecv, count * sizeof(float));
}

TEST(Planner, RejectsBadArguments) {
  const Topology topo = Topology::singleDomain(0, 2);
  CollOp op = fakeOp(CollKind::Broadcast, 4, 2, 0);
  op.root = 2;
  EXPECT_THROW(plan(topo, {&op, 1}, Tuning{}), InvalidArgument);
  op = fakeOp(CollKind::Send, 4, 2, 0);
  op.peer = -1;
  EXPECT_THROW(plan(topo, {&op, 1}, Tuning{}), InvalidArgument);
  op = fakeOp(CollKind::AllReduce, 4, 2, 0);
  op.type = static_cast<DataType>(42);
  EXPECT_THROW(plan(topo, {&op, 1}, Tuning{}), InvalidArgument);
  op = fakeOp(CollKind::AllReduce, 4, 2, 0);
  op.op.kind = static_cast<RedOpKind>(9);
  EXPECT_THROW(plan(topo, {&op, 1}, Tuning{}), InvalidArgument);
  op = fakeOp(CollKind::AllToAllv, 4, 2, 0);
  op.rdispls.pop_back();
  EXPECT_THROW(plan(topo, {&op, 1}, Tuning{}), InvalidArgument);
  op = fakeOp(CollKind::Send, 4, 2, 0);
  op.peer = 0;  // to itself, with no matching receive
  EXPECT_THROW(plan(topo, {&op, 1}, Tuning{}), InvalidArgument);
  EXPECT_THROW(plan(Topology{0, 2, {0, 2}}, {}, Tuning{}), InvalidArgument);  // domain 1 unused
}

TEST(DepTracker, ReadsWaitForWritersAndWritesWaitForReaders) {
  DepTracker t;
  std::vector<uint32_t> deps;
  t.write(Location::user(reinterpret_cast<void*>(1000)), 100, 0, deps);
  EXPECT_TRUE(deps.empty());
  t.read(Location::user(reinterpret_cast<void*>(1050)), 100, 1, deps);  // overlaps the write
  EXPECT_EQ(deps, std::vector<uint32_t>{0});
  deps.clear();
  t.read(Location::scratch(1050), 100, 2, deps);  // another space: independent
  EXPECT_TRUE(deps.empty());
  t.write(Location::user(reinterpret_cast<void*>(1140)), 20, 3, deps);  // after the read of [1050,1150)
  EXPECT_EQ(deps, std::vector<uint32_t>{1});
  deps.clear();
  t.write(Location::user(reinterpret_cast<void*>(900)), 100, 4, deps);  // touches nothing earlier
  EXPECT_TRUE(deps.empty());
}

// Mid-size operations are cut into Tuning::midChunks pieces, none below minChunkBytes nor above chunkBytes:
// the stream pipeline's 4 (1 MiB .. 4 MiB) cuts an 8 MiB all-reduce of two ranks (the pair exchange: each rank
// sends everything) into 4 sends of 2 MiB, where the host engine's 8 would make 8 of 1 MiB.
TEST(Planner, MidSizeOperationsAreCutIntoMidChunksPieces) {
  auto sendsOf = [](size_t bytes, size_t midChunks) {
    Tuning t;
    t.chunkBytes = 4 << 20;
    t.minChunkBytes = 1 << 20;
    t.midChunks = midChunks;
    t.pairExchangeBytes = size_t{64} << 20;
    const CollOp op = fakeOp(CollKind::AllReduce, bytes / 4, 2, 0);
    const Schedule s = plan(Topology{0, 2, {0, 1}}, {&op, 1}, t);
    std::vector<uint64_t> sends;
    for (const Step& st : s.steps)
      if (st.kind == StepKind::Send) sends.push_back(st.bytes);
    return sends;
  };
  const uint64_t MiB = 1 << 20;
  EXPECT_EQ(sendsOf(8 * MiB, 4), std::vector<uint64_t>(4, 2 * MiB));
  EXPECT_EQ(sendsOf(8 * MiB, 8), std::vector<uint64_t>(8, MiB));
  EXPECT_EQ(sendsOf(2 * MiB, 4), std::vector<uint64_t>(2, MiB));     // none below minChunkBytes
  EXPECT_EQ(sendsOf(64 * MiB, 4), std::vector<uint64_t>(16, 4 * MiB));  // none above chunkBytes
  EXPECT_EQ(sendsOf(8 * MiB, 0), std::vector<uint64_t>(2, 4 * MiB));  // 0 counts as one piece (capped)
}

TEST(Tuning, ReadsTheConfiguration) {
  setenv("HETCCL_ALGO", "tree", 1);
  setenv("HETCCL_CHUNK_BYTES", "8K", 1);
  reloadConfig();
  const Tuning t = Tuning::fromConfig();
  EXPECT_EQ(t.algo, AlgoChoice::Tree);
  EXPECT_EQ(t.chunkBytes, 8192u);
  setenv("HETCCL_ALGO", "bogus", 1);
  reloadConfig();
  EXPECT_THROW(Tuning::fromConfig(), InvalidArgument);
  unsetenv("HETCCL_ALGO");
  unsetenv("HETCCL_CHUNK_BYTES");
  reloadConfig();
}

}  // namespace
}  // namespace hetccl::algo
