// StagingPlan: which device ranges a group touches, how they merge, which are copied in and out.
#include "exec/staged/staging_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace hetccl {
namespace {

using algo::CollKind;
using algo::CollOp;

// Fake "device" addresses: never dereferenced by the plan.
const void* dev(uintptr_t a) { return reinterpret_cast<const void*>(a); }
void* devMut(uintptr_t a) { return reinterpret_cast<void*>(a); }

CollOp op(CollKind kind, uintptr_t send, uintptr_t recv, size_t count) {
  CollOp o;
  o.kind = kind;
  o.sendbuff = send ? dev(send) : nullptr;
  o.recvbuff = recv ? devMut(recv) : nullptr;
  o.count = count;
  o.type = DataType::Float32;
  return o;
}

TEST(StagingPlan, OutOfPlaceAllReduceCopiesInputInAndOutputOut) {
  CollOp o = op(CollKind::AllReduce, 0x10000, 0x20000, 100);
  auto plan = StagingPlan::build({&o, 1}, 0, 2);
  ASSERT_EQ(plan.regions.size(), 2u);
  EXPECT_TRUE(plan.regions[0].copyIn);
  EXPECT_FALSE(plan.regions[0].copyOut);
  EXPECT_FALSE(plan.regions[1].copyIn);  // fully overwritten: no need to bring it in
  EXPECT_TRUE(plan.regions[1].copyOut);
  EXPECT_EQ(plan.regions[0].bytes, 400u);
}

TEST(StagingPlan, InPlaceAllGatherIsOneRegionKeepingTheOffset) {
  const int rank = 2, n = 4;
  const uintptr_t recv = 0x40000;
  CollOp o = op(CollKind::AllGather, recv + rank * 10 * 4, recv, 10);
  auto plan = StagingPlan::build({&o, 1}, rank, n);
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_TRUE(plan.regions[0].copyIn);
  EXPECT_TRUE(plan.regions[0].copyOut);
  EXPECT_EQ(plan.regions[0].bytes, 160u);
  char host[512];
  auto staged = plan.translate({&o, 1}, host);
  EXPECT_EQ(staged[0].recvbuff, host + plan.regions[0].hostOffset);
  EXPECT_EQ(staged[0].sendbuff, host + plan.regions[0].hostOffset + rank * 40);
}

TEST(StagingPlan, ReduceWritesOnlyAtTheRoot) {
  CollOp o = op(CollKind::Reduce, 0x10000, 0x20000, 8);
  o.root = 1;
  auto nonRoot = StagingPlan::build({&o, 1}, 0, 2);
  ASSERT_EQ(nonRoot.regions.size(), 1u);  // the receive buffer is not touched off the root
  EXPECT_FALSE(nonRoot.regions[0].copyOut);
  auto root = StagingPlan::build({&o, 1}, 1, 2);
  ASSERT_EQ(root.regions.size(), 2u);
  EXPECT_TRUE(root.regions[1].copyOut);
}

TEST(StagingPlan, AllToAllvOutputWithGapsIsCopiedInFirst) {
  CollOp o = op(CollKind::AllToAllv, 0x10000, 0x20000, 0);
  o.sendcounts = {1, 2};
  o.sdispls = {0, 4};
  o.recvcounts = {3, 0};
  o.rdispls = {5, 0};
  auto plan = StagingPlan::build({&o, 1}, 0, 2);
  ASSERT_EQ(plan.regions.size(), 2u);
  EXPECT_EQ(plan.regions[0].bytes, 6u * 4);
  EXPECT_EQ(plan.regions[1].bytes, 8u * 4);
  EXPECT_TRUE(plan.regions[1].copyIn);  // elements 0..4 are not written and must survive
  EXPECT_TRUE(plan.regions[1].copyOut);
}

TEST(StagingPlan, GroupBuffersThatOverlapMerge) {
  CollOp a = op(CollKind::Send, 0x10000, 0, 100);
  CollOp b = op(CollKind::Recv, 0, 0x10000 + 200, 100);
  CollOp group[] = {a, b};
  auto plan = StagingPlan::build(group, 0, 2);
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_EQ(plan.regions[0].bytes, 600u);
  EXPECT_TRUE(plan.regions[0].copyIn);
  EXPECT_TRUE(plan.regions[0].copyOut);
  EXPECT_GE(plan.hostBytes, 600u);
}

TEST(StagingPlan, ZeroCountTouchesNothing) {
  CollOp o = op(CollKind::AllReduce, 0x10000, 0x20000, 0);
  auto plan = StagingPlan::build({&o, 1}, 0, 2);
  EXPECT_TRUE(plan.regions.empty());
  EXPECT_EQ(plan.hostBytes, 0u);
}

}  // namespace
}  // namespace hetccl
