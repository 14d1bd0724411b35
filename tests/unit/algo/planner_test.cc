// Pure planner checks (no transport): both ends of every connection agree on message sizes and order,
// dependencies only point backwards, scratch stays in bounds, pipelining and the hierarchical traffic
// pattern have the intended shape, and bad arguments are rejected.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "algo/dep_tracker.hpp"
#include "algo/planner.hpp"
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

// Host calls across domains of one rank each (Tuning::smallAllReduceByDoublingOnOneRankDomains) run an
// all-reduce up to HETCCL_SMALL_BYTES by recursive doubling, as one domain would (on two ranks one
// exchange: a single send each; on four, log2(4) = 2 sends), and above it by the hierarchical plan (rank 0,
// owner of one piece, sends to every other rank). With a domain of two ranks, or the flag off, the
// hierarchical plan at every size: more sends.
TEST(Planner, SmallAllReduceAcrossOneRankDomainsIsRecursiveDoublingOnHostCalls) {
  auto shapeOf = [](const std::vector<int>& domainOf, size_t count, const Tuning& t) {
    return allReduceShape(Topology{0, static_cast<int>(domainOf.size()), domainOf}, count, t);
  };
  const Tuning host = Tuning::fromConfig();
  EXPECT_TRUE(host.smallAllReduceByDoublingOnOneRankDomains);
  EXPECT_FALSE(host.smallAllReduceByDoubling);
  Tuning off = host;
  off.smallAllReduceByDoublingOnOneRankDomains = false;
  const size_t small = host.smallBytes / sizeof(float), large = small + 1000;
  for (size_t count : {size_t{1000}, small}) {
    EXPECT_EQ(shapeOf({0, 1}, count, host).sends, 1) << count;
    EXPECT_EQ(shapeOf({0, 1, 2, 3}, count, host).sends, 2) << count;
    EXPECT_GT(shapeOf({0, 1}, count, off).sends, 1) << count;
    EXPECT_GT(shapeOf({0, 1, 2, 3}, count, off).sends, 2) << count;
    EXPECT_GT(shapeOf({0, 0, 1, 1}, count, host).sends, 2) << count;
  }
  EXPECT_EQ(shapeOf({0, 1, 2, 3}, large, host).peers, 3u);
  EXPECT_GT(shapeOf({0, 1, 2, 3}, large, host).sends, 2);
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
