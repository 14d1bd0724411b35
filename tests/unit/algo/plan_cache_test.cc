// The plan cache returns exactly what the planner returns, reuses a schedule only for the same group
// (every field that shapes the plan, buffer addresses included) and forgets the least recently used.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "algo/plan_cache.hpp"
#include "algo/planner.hpp"
#include "core/error.hpp"

namespace hetccl::algo {
namespace {

bool sameSchedule(const Schedule& a, const Schedule& b) {
  if (a.steps.size() != b.steps.size() || a.deps != b.deps || a.scratchBytes != b.scratchBytes ||
      a.reductions.size() != b.reductions.size())
    return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const Step &x = a.steps[i], &y = b.steps[i];
    if (x.kind != y.kind || x.peer != y.peer || !(x.dst == y.dst) || !(x.src == y.src) || x.bytes != y.bytes ||
        x.reduction != y.reduction || x.depBegin != y.depBegin || x.depEnd != y.depEnd)
      return false;
  }
  return true;
}

struct Fixture {
  Topology topo{0, 4, {0, 0, 1, 1}};
  Tuning tuning;
  std::vector<float> a = std::vector<float>(1 << 16), b = std::vector<float>(1 << 16);
  CollOp allReduce(float* buf, size_t count) const {
    CollOp op;
    op.sendbuff = op.recvbuff = buf;
    op.count = count;
    return op;
  }
};

TEST(PlanCache, HitReturnsThePlannersScheduleAndMissesOnAnyDifference) {
  Fixture f;
  PlanCache cache(f.topo, f.tuning, 8);
  CollOp op = f.allReduce(f.a.data(), 40'000);
  auto first = cache.get({&op, 1});
  EXPECT_TRUE(sameSchedule(*first, plan(f.topo, {&op, 1}, f.tuning)));
  EXPECT_EQ(cache.get({&op, 1}), first);  // the same object: a hit
  EXPECT_EQ(cache.hits(), 1u);
  // Each field that shapes the plan makes another entry.
  std::vector<CollOp> variants(6, op);
  variants[0].sendbuff = variants[0].recvbuff = f.b.data();
  variants[1].count = 40'001;
  variants[2].type = DataType::Int32;
  variants[3].op.kind = RedOpKind::Max;
  variants[4].op.kind = RedOpKind::PreMulSum;
  variants[4].op.scalar[0] = 1;
  variants[5].kind = CollKind::Broadcast;
  for (const CollOp& v : variants) {
    auto s = cache.get({&v, 1});
    EXPECT_NE(s, first);
    EXPECT_TRUE(sameSchedule(*s, plan(f.topo, {&v, 1}, f.tuning)));
  }
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 7u);
}

TEST(PlanCache, EvictsTheLeastRecentlyUsed) {
  Fixture f;
  PlanCache cache(f.topo, f.tuning, 2);
  CollOp x = f.allReduce(f.a.data(), 100), y = f.allReduce(f.a.data(), 200), z = f.allReduce(f.a.data(), 300);
  cache.get({&x, 1});
  cache.get({&y, 1});
  cache.get({&x, 1});  // x is now the most recent
  cache.get({&z, 1});  // evicts y
  const uint64_t misses = cache.misses();
  cache.get({&x, 1});
  EXPECT_EQ(cache.misses(), misses);
  cache.get({&y, 1});
  EXPECT_EQ(cache.misses(), misses + 1);
}

TEST(PlanCache, RejectedGroupIsNotCachedAndCapacityZeroPlansEveryTime) {
  Fixture f;
  PlanCache cache(f.topo, f.tuning, 4);
  CollOp bad = f.allReduce(f.a.data(), 10);
  bad.kind = CollKind::Broadcast;
  bad.root = 9;
  EXPECT_THROW(cache.get({&bad, 1}), InvalidArgument);
  EXPECT_THROW(cache.get({&bad, 1}), InvalidArgument);
  PlanCache none(f.topo, f.tuning, 0);
  CollOp op = f.allReduce(f.a.data(), 10);
  EXPECT_NE(none.get({&op, 1}), none.get({&op, 1}));
  EXPECT_EQ(none.hits(), 0u);
}

}  // namespace
}  // namespace hetccl::algo
