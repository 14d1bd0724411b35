// Pure planner checks of the hierarchical algorithms with the vendor library inside domains
// (Topology::domainCollectives): both ends of every ring connection agree, no ring message stays inside
// a domain, every member of a domain lists the same vendor calls in the same order (the vendor's rule;
// a difference would hang or corrupt on a GPU), dependencies point backwards and every access stays in
// scratch. Exact results are checked end to end on the simulated GPU (tests/unit/stream_exec).
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "algo/op_context.hpp"
#include "algo/planner.hpp"
#include "algo/selection.hpp"
#include "core/error.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::algo {
namespace {

using test::Layout;

const std::vector<Layout> kLayouts = {
    {"1+1", {0, 1}},         {"2+2", {0, 0, 1, 1}},          {"3+1", {0, 0, 0, 1}},
    {"1+3", {0, 1, 1, 1}},   {"2+2+2", {0, 0, 1, 1, 2, 2}},  {"4+4", {0, 0, 0, 0, 1, 1, 1, 1}},
    {"6+2", {0, 0, 0, 0, 0, 0, 1, 1}}, {"interleaved", {0, 1, 0, 1}}, {"interleaved 3+3", {1, 0, 0, 1, 1, 0}},
    {"1+1+1", {0, 1, 2}}};

const CollKind kKinds[] = {CollKind::AllReduce,     CollKind::Broadcast, CollKind::Reduce,   CollKind::AllGather,
                           CollKind::ReduceScatter, CollKind::AllToAll,  CollKind::AllToAllv};

CollOp fakeOp(CollKind kind, size_t count, int root, bool inPlace, int rank) {
  CollOp op;
  op.kind = kind;
  op.count = count;
  op.type = DataType::Float32;
  op.op.kind = RedOpKind::Avg;
  op.recvbuff = reinterpret_cast<void*>(uintptr_t{1} << 36);
  op.sendbuff = inPlace ? op.recvbuff : reinterpret_cast<const void*>(uintptr_t{1} << 32);
  if (inPlace && kind == CollKind::AllGather) op.sendbuff = static_cast<char*>(op.recvbuff) + rank * count * 4;
  if (inPlace && kind == CollKind::ReduceScatter) op.recvbuff = static_cast<char*>(op.recvbuff) + rank * count * 4;
  op.root = root;
  return op;
}

/// AllToAllv tables that agree between ranks: rank r sends count + r + p elements to p.
void addTables(CollOp& op, int nranks, int rank) {
  size_t at = 0;
  for (int p = 0; p < nranks; ++p) {
    op.sendcounts.push_back(op.count + p + rank);
    op.recvcounts.push_back(op.count + rank + p);
    op.sdispls.push_back(at);
    op.rdispls.push_back(at);
    at += op.count + p + rank + 7;
  }
}

/// The bytes a DomainCollective step reads at src and writes at dst on domain rank `pos` of `n`.
std::pair<uint64_t, uint64_t> accessed(const Step& st, size_t n, size_t pos) {
  switch (st.domainColl) {
    case DomainColl::ReduceScatter: return {st.bytes * n, st.bytes};
    case DomainColl::AllGather: return {st.bytes, st.bytes * n};
    case DomainColl::Broadcast: return {pos == static_cast<size_t>(st.peer) ? st.bytes : 0, st.bytes};
    case DomainColl::Reduce: return {st.bytes, pos == static_cast<size_t>(st.peer) ? st.bytes : 0};
    case DomainColl::AllReduce:
    case DomainColl::Exchange: break;
  }
  return {st.bytes, st.bytes};
}

void check(const Layout& layout, CollKind kind, size_t count, bool inPlace, const Tuning& tuning) {
  const int n = static_cast<int>(layout.domainOf.size());
  const std::string what = concat(collKindName(kind), " on ", layout.name, ", count ", count, inPlace ? " in place" : "");
  std::map<std::pair<int, int>, std::vector<uint64_t>> sent, received;
  std::map<int, std::vector<std::vector<std::tuple<int, uint64_t, int>>>> vendorCalls;  // per domain, per member
  for (int r = 0; r < n; ++r) {
    Topology topo{r, n, layout.domainOf};
    topo.domainCollectives = true;
    ASSERT_TRUE(vendorHier(topo, tuning)) << what;
    const std::vector<int> members = topo.membersOf(layout.domainOf[r]);
    const size_t pos = positionOf(members, r);
    CollOp op = fakeOp(kind, count, n - 1, inPlace, r);
    if (kind == CollKind::AllToAllv) addTables(op, n, r);
    const Schedule s = plan(topo, {&op, 1}, tuning);
    auto& calls = vendorCalls[layout.domainOf[r]];
    calls.resize(members.size());
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      for (uint32_t d : s.depsOf(st)) ASSERT_LT(d, i) << what << ": step " << i << " depends on a later step";
      uint64_t srcBytes = st.bytes, dstBytes = st.bytes;
      if (st.kind == StepKind::DomainCollective && st.domainColl == DomainColl::Exchange) {
        // Point-to-point inside the domain: matched per pair below, not in the collectives' order.
        for (const DomainTransfer& t : s.transfersOf(st)) {
          if (t.at.space == Location::Space::Scratch) {
            ASSERT_LE(t.at.addr + t.bytes, s.scratchBytes) << what;
          }
          const int peer = members[t.peer];
          ASSERT_NE(peer, r) << what;
          if (t.send) sent[{r, peer}].push_back(t.bytes);
          else received[{peer, r}].push_back(t.bytes);
        }
        continue;
      }
      if (st.kind == StepKind::DomainCollective) {
        std::tie(srcBytes, dstBytes) = accessed(st, members.size(), pos);
        calls[pos].emplace_back(static_cast<int>(st.domainColl), st.bytes, st.peer);
      }
      if (st.src.space == Location::Space::Scratch) {
        ASSERT_LE(st.src.addr + srcBytes, s.scratchBytes) << what;
      }
      if (st.dst.space == Location::Space::Scratch) {
        ASSERT_LE(st.dst.addr + dstBytes, s.scratchBytes) << what;
      }
      if (st.kind == StepKind::Send || st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce) {
        ASSERT_NE(layout.domainOf[st.peer], layout.domainOf[r])
            << what << ": rank " << r << " step " << i << " (" << stepKindName(st.kind) << ") goes to rank " << st.peer
            << " of its own domain over a ring";
      }
      if (st.kind == StepKind::Send) sent[{r, st.peer}].push_back(st.bytes);
      if (st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce) received[{st.peer, r}].push_back(st.bytes);
    }
  }
  EXPECT_EQ(sent, received) << what;
  for (auto& [domain, calls] : vendorCalls)
    for (size_t m = 1; m < calls.size(); ++m)
      EXPECT_EQ(calls[m], calls[0]) << what << ": domain " << domain << " member " << m
                                    << " lists other vendor calls than member 0";
}

TEST(VendorHierPlan, ConnectionsAgreeVendorCallsMatchAndNothingStaysInADomainOnARing) {
  Tuning t;
  t.algo = AlgoChoice::Hier;  // also for 1+1+1, where auto would not use the vendor
  t.chunkBytes = 4096;
  t.minChunkBytes = 4096;
  t.hierMinChunkBytes = 4096;
  t.hierChunkBytes = 16384;  // several pipeline chunks at the larger counts
  for (const Layout& layout : kLayouts)
    for (CollKind kind : kKinds)
      for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{1000}, size_t{40'001}})
        for (bool inPlace : {false, true}) check(layout, kind, count, inPlace, t);
}

TEST(VendorHierPlan, AutoUsesTheVendorOnlyWhereADomainHasSeveralRanks) {
  Tuning t;
  Topology two{0, 4, {0, 0, 1, 1}};
  EXPECT_FALSE(vendorHier(two, t));  // no domain communicators
  two.domainCollectives = true;
  EXPECT_TRUE(vendorHier(two, t));
  Topology ones{0, 2, {0, 1}};
  ones.domainCollectives = true;
  EXPECT_FALSE(vendorHier(ones, t));
  t.algo = AlgoChoice::Hier;
  EXPECT_TRUE(vendorHier(ones, t));
  t.algo = AlgoChoice::Ring;
  EXPECT_FALSE(vendorHier(two, t));
  Topology single{0, 2, {0, 0}};
  single.domainCollectives = true;
  EXPECT_FALSE(vendorHier(single, Tuning{}));  // one domain: the vendor runs the whole call elsewhere
}

// A call is cut into 4 chunks, each between Tuning::hierMinChunkBytes and hierChunkBytes: counted as the
// vendor reduce-scatters an all-reduce plans (one per chunk).
TEST(VendorHierPlan, ChunksStayBetweenTheirFloorAndCeiling) {
  auto reduceScatters = [](size_t bytes, size_t floor, size_t ceiling) {
    Tuning t;
    t.hierMinChunkBytes = floor;
    t.hierChunkBytes = ceiling;
    Topology topo{0, 4, {0, 0, 1, 1}};
    topo.domainCollectives = true;
    CollOp op = fakeOp(CollKind::AllReduce, bytes / sizeof(float), 0, false, 0);
    const Schedule s = plan(topo, {&op, 1}, t);
    int n = 0;
    for (const Step& st : s.steps)
      n += st.kind == StepKind::DomainCollective && st.domainColl == DomainColl::ReduceScatter ? 1 : 0;
    return n;
  };
  constexpr size_t MiB = size_t{1} << 20;
  EXPECT_EQ(reduceScatters(16 * MiB, 1 * MiB, 64 * MiB), 4);    // a quarter each
  EXPECT_EQ(reduceScatters(16 * MiB, 16 * MiB, 64 * MiB), 1);   // the floor: one chunk (several hosts)
  EXPECT_EQ(reduceScatters(16 * MiB, 8 * MiB, 64 * MiB), 2);
  EXPECT_EQ(reduceScatters(256 * MiB, 16 * MiB, 64 * MiB), 4);  // a quarter is the ceiling
  EXPECT_EQ(reduceScatters(256 * MiB, 1 * MiB, 8 * MiB), 32);   // the ceiling
  EXPECT_EQ(reduceScatters(256 * MiB, 16 * MiB, 8 * MiB), 32);  // a floor above the ceiling: the ceiling
}

}  // namespace
}  // namespace hetccl::algo
