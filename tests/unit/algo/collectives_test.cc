// The collective matrix: every algorithm x every collective x the standard layouts x sizes, in place and
// out of place, exact against a reference. Types and operators rotate through the matrix; a second sweep
// covers every (type, operator) pair on reducing collectives.
#include <gtest/gtest.h>

#include "unit/algo/collective_case.hpp"

namespace hetccl::test {
namespace {

using algo::AlgoChoice;
using algo::CollKind;

const std::vector<size_t> kSizes{0, 1, 7, 1000, 65537};
const std::vector<DataType> kTypes{DataType::Float32, DataType::Int32, DataType::Float64, DataType::Int8,
                                   DataType::Float16, DataType::Bfloat16, DataType::Uint64, DataType::Uint8,
                                   DataType::Int64, DataType::Uint32};
const std::vector<RedOpKind> kOps{RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min, RedOpKind::Avg,
                                  RedOpKind::PreMulSum};

/// The algorithms worth forcing for a collective (others have a single algorithm).
std::vector<AlgoChoice> algosFor(CollKind k) {
  switch (k) {
    case CollKind::AllReduce:
      return {AlgoChoice::Auto, AlgoChoice::Ring, AlgoChoice::Tree, AlgoChoice::RecursiveDoubling, AlgoChoice::Hier};
    case CollKind::Broadcast:
    case CollKind::Reduce: return {AlgoChoice::Auto, AlgoChoice::Ring, AlgoChoice::Tree};
    default: return {AlgoChoice::Auto};
  }
}

void runMatrix(std::vector<CollKind> kinds) {
  size_t rotation = 0, failures = 0, runs = 0;
  for (const Layout& layout : standardLayouts()) {
    const int n = static_cast<int>(layout.domainOf.size());
    for (CollKind kind : kinds) {
      for (AlgoChoice algo : algosFor(kind)) {
        for (size_t count : kSizes) {
          for (bool inPlace : {false, true}) {
            CollCase c;
            c.layout = layout;
            c.kind = kind;
            c.algo = algo;
            c.count = count;
            c.inPlace = inPlace;
            c.type = kTypes[rotation % kTypes.size()];
            c.op = kOps[(rotation / 3) % kOps.size()];
            c.root = static_cast<int>(rotation % n);
            c.chunkBytes = rotation % 2 ? 4096 : 1000;  // 1000: not a multiple of 8-byte elements
            c.eagerBytes = rotation % 5 == 0 ? 256 : 0;
            ++rotation;
            if (count == 65537 && n > 4 && rotation % 2) continue;  // keep the binary fast
            ++runs;
            const std::string err = runCollCase(c);
            if (!err.empty()) {
              ADD_FAILURE() << c.describe() << ": " << err;
              if (++failures > 10) return;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 0u);
}

TEST(Collectives, AllReduceEveryAlgorithmAndLayout) { runMatrix({CollKind::AllReduce}); }
TEST(Collectives, BroadcastAndReduce) { runMatrix({CollKind::Broadcast, CollKind::Reduce}); }
TEST(Collectives, AllGatherAndReduceScatter) { runMatrix({CollKind::AllGather, CollKind::ReduceScatter}); }
TEST(Collectives, AllToAllAndV) { runMatrix({CollKind::AllToAll, CollKind::AllToAllv}); }
TEST(Collectives, SendRecvRing) { runMatrix({kSendRecvRing}); }

// Every (type, operator) pair on every reducing collective and algorithm, on an odd layout.
TEST(Collectives, EveryTypeAndOperator) {
  size_t failures = 0;
  for (const Layout& layout : {standardLayouts()[7], standardLayouts()[2]}) {
    for (CollKind kind : {CollKind::AllReduce, CollKind::Reduce, CollKind::ReduceScatter}) {
      for (AlgoChoice algo : algosFor(kind)) {
        for (DataType type : kTypes) {
          for (RedOpKind op : kOps) {
            CollCase c;
            c.layout = layout;
            c.kind = kind;
            c.algo = algo;
            c.count = 37;
            c.type = type;
            c.op = op;
            c.inPlace = (static_cast<int>(type) + static_cast<int>(op)) % 2 == 0;
            c.chunkBytes = 24;
            c.root = 1;
            const std::string err = runCollCase(c);
            if (!err.empty()) {
              ADD_FAILURE() << c.describe() << ": " << err;
              if (++failures > 10) return;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hetccl::test
