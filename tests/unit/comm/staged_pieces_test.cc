// cutIntoPieces: how the staged device path cuts a group into pieces that pipeline, and which pieces are
// staged in place.
#include "exec/staged/staged_pieces.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace hetccl {
namespace {

using algo::CollKind;
using algo::CollOp;

CollOp op(CollKind kind, uintptr_t send, uintptr_t recv, size_t count, DataType type = DataType::Float32) {
  CollOp o;
  o.kind = kind;
  o.sendbuff = send ? reinterpret_cast<const void*>(send) : nullptr;
  o.recvbuff = recv ? reinterpret_cast<void*>(recv) : nullptr;
  o.count = count;
  o.type = type;
  return o;
}

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(StagedPieces, ALargeAllReduceIsCutIntoContiguousRangesCoveringItExactly) {
  // 1000 float32 = 4000 bytes in pieces of 1024 bytes: 256 elements each, the last 232.
  const CollOp o = op(CollKind::AllReduce, 0x100000, 0x200000, 1000);
  auto pieces = cutIntoPieces({&o, 1}, 0, 2, 1024);
  ASSERT_EQ(pieces.size(), 4u);
  size_t next = 0;
  for (const StagedPiece& p : pieces) {
    ASSERT_EQ(p.ops.size(), 1u);
    EXPECT_EQ(addr(p.ops[0].recvbuff), 0x200000 + next * 4);
    next += p.ops[0].count;
  }
  EXPECT_EQ(next, 1000u);
  EXPECT_EQ(pieces[0].ops[0].count, 256u);
  EXPECT_EQ(pieces[3].ops[0].count, 232u);
}

TEST(StagedPieces, AnOutOfPlaceAllReducePieceIsStagedInPlaceFromItsInput) {
  const CollOp o = op(CollKind::AllReduce, 0x100000, 0x200000, 1000);
  auto pieces = cutIntoPieces({&o, 1}, 0, 2, 1024);
  const StagedPiece& p = pieces[2];  // elements 512..767
  EXPECT_EQ(p.ops[0].sendbuff, p.ops[0].recvbuff);  // in place on the host
  ASSERT_EQ(p.plan.regions.size(), 1u);             // one host buffer: no input copy on the host
  const StagingRegion& r = p.plan.regions[0];
  EXPECT_EQ(r.device, 0x200000u + 512 * 4);
  EXPECT_EQ(r.bytes, 256u * 4);
  EXPECT_TRUE(r.copyIn);
  EXPECT_TRUE(r.copyOut);
  EXPECT_EQ(addr(r.copyInFrom()), 0x100000u + 512 * 4);  // the input's range, not the output's
  EXPECT_EQ(p.plan.hostBytes, 1024u);
}

TEST(StagedPieces, BroadcastIsStagedInPlaceFromTheInputOnlyAtTheRoot) {
  const CollOp o = op(CollKind::Broadcast, 0x100000, 0x200000, 100);
  auto atRoot = cutIntoPieces({&o, 1}, 0, 3, 4096);
  ASSERT_EQ(atRoot.size(), 1u);
  ASSERT_EQ(atRoot[0].plan.regions.size(), 1u);
  EXPECT_TRUE(atRoot[0].plan.regions[0].copyIn);
  EXPECT_EQ(addr(atRoot[0].plan.regions[0].copyInFrom()), 0x100000u);
  auto elsewhere = cutIntoPieces({&o, 1}, 1, 3, 4096);
  ASSERT_EQ(elsewhere[0].plan.regions.size(), 1u);
  EXPECT_FALSE(elsewhere[0].plan.regions[0].copyIn);  // fully overwritten: nothing comes in
  EXPECT_TRUE(elsewhere[0].plan.regions[0].copyOut);
}

TEST(StagedPieces, ReduceIsCutButNotStagedInPlace) {
  const CollOp o = op(CollKind::Reduce, 0x100000, 0x200000, 2048, DataType::Int64);
  auto pieces = cutIntoPieces({&o, 1}, 0, 2, 4096);  // 512 int64 per piece
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_NE(pieces[1].ops[0].sendbuff, static_cast<const void*>(pieces[1].ops[0].recvbuff));
  EXPECT_EQ(addr(pieces[1].ops[0].sendbuff), 0x100000u + 512 * 8);
  EXPECT_EQ(addr(pieces[1].ops[0].recvbuff), 0x200000u + 512 * 8);
  for (const StagingRegion& r : pieces[1].plan.regions) EXPECT_EQ(r.source, 0u);
}

TEST(StagedPieces, OverlappingOutOfPlaceBuffersAreNotStagedInPlace) {
  const CollOp o = op(CollKind::AllReduce, 0x100000, 0x100000 + 40, 100);  // ranges overlap by 360 bytes
  auto pieces = cutIntoPieces({&o, 1}, 0, 2, 1 << 20);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_NE(pieces[0].ops[0].sendbuff, static_cast<const void*>(pieces[0].ops[0].recvbuff));
  for (const StagingRegion& r : pieces[0].plan.regions) EXPECT_EQ(r.source, 0u);
}

TEST(StagedPieces, GathersGroupsAndSmallCallsStayOnePiece) {
  const CollOp gather = op(CollKind::AllGather, 0x100000, 0x200000, 1 << 20);
  EXPECT_EQ(cutIntoPieces({&gather, 1}, 0, 2, 4096).size(), 1u);
  const CollOp group[2] = {op(CollKind::AllReduce, 0x100000, 0x100000, 1 << 20),
                           op(CollKind::AllReduce, 0x800000, 0x800000, 1 << 20)};
  auto g = cutIntoPieces(group, 0, 2, 4096);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].ops.size(), 2u);
  const CollOp small = op(CollKind::AllReduce, 0x100000, 0x100000, 1024);  // exactly one piece's bytes
  EXPECT_EQ(cutIntoPieces({&small, 1}, 0, 2, 4096).size(), 1u);
}

TEST(StagedPieces, PieceBytesZeroIsTheWholeGroupAsPlannedBefore) {
  const CollOp o = op(CollKind::AllReduce, 0x100000, 0x200000, 1 << 20);
  auto pieces = cutIntoPieces({&o, 1}, 0, 2, 0);
  ASSERT_EQ(pieces.size(), 1u);
  const StagingPlan whole = StagingPlan::build({&o, 1}, 0, 2);
  ASSERT_EQ(pieces[0].plan.regions.size(), whole.regions.size());
  EXPECT_EQ(pieces[0].plan.hostBytes, whole.hostBytes);
  EXPECT_EQ(pieces[0].ops[0].sendbuff, o.sendbuff);  // out of place, as the caller asked
  for (const StagingRegion& r : pieces[0].plan.regions) EXPECT_EQ(r.source, 0u);
}

TEST(StagedPieces, PiecesSmallerThanOneElementStillMoveWholeElements) {
  const CollOp o = op(CollKind::AllReduce, 0x100000, 0x100000, 3, DataType::Float64);
  auto pieces = cutIntoPieces({&o, 1}, 0, 2, 4);  // 4 bytes < 8: one element per piece
  ASSERT_EQ(pieces.size(), 3u);
  for (const StagedPiece& p : pieces) EXPECT_EQ(p.ops[0].count, 1u);
}

}  // namespace
}  // namespace hetccl
