// The header every shared-memory segment of slots begins with (transport/shm/segment_header.hpp): what a
// mapper accepts and what it refuses, with the reason. The three kinds that use it check it on real
// segments too (shm rings: the shm_ring wire vectors and their negative cases; GPU rings and RMA windows:
// their own tests).
#include <gtest/gtest.h>

#include <string>

#include "transport/shm/segment_header.hpp"

namespace hetccl::transport::shm {
namespace {

size_t pageAfterHeader(uint32_t) { return 4096; }
size_t slotHeadersThenPage(uint32_t slots) { return (256 + size_t{slots} * 64 + 4095) / 4096 * 4096; }

constexpr SegmentKind kKind{"test segment", 0x1122334455667788ull, 7, 16, 1 << 20, &pageAfterHeader};
constexpr SegmentKind kOtherKind{"other segment", 0x8877665544332211ull, 7, 16, 1 << 20, &slotHeadersThenPage};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class SegmentHeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    describeSegment(h_, kKind, 4, 128, 2, 5);
    publishSegment(h_, kKind);
  }
  std::string problem() const { return segmentProblem(h_, kKind, 4096 + 4 * 128, 2, 5); }
  SegmentHeader h_{};
};

TEST_F(SegmentHeaderTest, WhatTheCreatorDescribedAndPublishedIsAccepted) {
  EXPECT_EQ(h_.version, 7u);
  EXPECT_EQ(h_.totalBytes, 4096u + 4 * 128);
  EXPECT_TRUE(segmentPublished(h_, kKind));
  EXPECT_EQ(problem(), "");
}

TEST_F(SegmentHeaderTest, UnpublishedOrAnotherKindIsRefused) {
  SegmentHeader fresh{};
  describeSegment(fresh, kKind, 4, 128, 2, 5);
  EXPECT_FALSE(segmentPublished(fresh, kKind));
  EXPECT_TRUE(contains(segmentProblem(fresh, kKind, 4096 + 4 * 128, 2, 5), "has a bad magic for a segment of kind 'test segment'"));
  EXPECT_FALSE(segmentPublished(h_, kOtherKind));
  EXPECT_TRUE(contains(segmentProblem(h_, kOtherKind, 4096 + 4 * 128, 2, 5), "has a bad magic for a segment of kind 'other segment'"));
}

TEST_F(SegmentHeaderTest, EachBadFieldIsNamed) {
  h_.version = 6;
  EXPECT_EQ(problem(), "has version 6 (expected 7)");
  h_.version = 7;
  for (auto [slots, bytes] : {std::pair<uint32_t, uint64_t>{0, 128}, {17, 128}, {4, 0}, {4, 100}, {4, (1 << 20) + 64}}) {
    h_.slots = slots;
    h_.slotBytes = bytes;
    EXPECT_TRUE(contains(problem(), "has a bad geometry")) << slots << " x " << bytes << ": " << problem();
  }
  h_.slots = 4;
  h_.slotBytes = 128;
  h_.totalBytes += 64;
  EXPECT_TRUE(contains(problem(), "does not match 4 slots of 128 bytes")) << problem();
  h_.totalBytes -= 64;
  EXPECT_TRUE(contains(segmentProblem(h_, kKind, 4096 + 3 * 128, 2, 5), "(4480 mapped)"))
      << segmentProblem(h_, kKind, 4096 + 3 * 128, 2, 5);
  h_.toRank = 4;
  EXPECT_EQ(problem(), "is for ranks 2->4 (expected 2->5)");
  h_.toRank = 5;
  EXPECT_EQ(problem(), "");
}

}  // namespace
}  // namespace hetccl::transport::shm
