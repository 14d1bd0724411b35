// Communicator lifecycle through the C API: queries, groups over several communicators of one thread,
// split, PreMulSum, finalize/destroy, and abort of a rank blocked in a collective.
#include <chrono>
#include <cstdint>

#include "api_fixture.hpp"

namespace hetccl::test {
namespace {

class Lifecycle : public ApiTest {};

TEST_F(Lifecycle, VersionAndErrorStrings) {
  int v = 0;
  ASSERT_EQ(hetcclGetVersion(&v), hetcclSuccess);
  EXPECT_EQ(v, HETCCL_VERSION_CODE);
  EXPECT_STREQ(hetcclGetErrorString(hetcclSuccess), "no error");
  EXPECT_NE(std::string(hetcclGetErrorString(hetcclRemoteError)).find("remote"), std::string::npos);
}

TEST_F(Lifecycle, QueriesAfterInitAll) {
  initAll(3);
  for (int r = 0; r < 3; ++r) {
    int count = 0, rank = -1, dev = 7;
    ASSERT_EQ(hetcclCommCount(comms_[r], &count), hetcclSuccess);
    ASSERT_EQ(hetcclCommUserRank(comms_[r], &rank), hetcclSuccess);
    ASSERT_EQ(hetcclCommCuDevice(comms_[r], &dev), hetcclSuccess);
    EXPECT_EQ(count, 3);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(dev, -1);
    hetcclResult_t async = hetcclInternalError;
    ASSERT_EQ(hetcclCommGetAsyncError(comms_[r], &async), hetcclSuccess);
    EXPECT_EQ(async, hetcclSuccess);
  }
}

TEST_F(Lifecycle, OneThreadDrivesAllRanksInAGroup) {
  initAll(3);
  std::vector<int64_t> data{1, 10, 100};
  ASSERT_EQ(hetcclGroupStart(), hetcclSuccess);
  for (int r = 0; r < 3; ++r)
    ASSERT_EQ(hetcclAllReduce(&data[r], &data[r], 1, hetcclInt64, hetcclSum, comms_[r], nullptr), hetcclSuccess);
  ASSERT_EQ(hetcclGroupEnd(), hetcclSuccess) << hetcclGetLastError(nullptr);
  EXPECT_EQ(data, (std::vector<int64_t>{111, 111, 111}));
}

TEST_F(Lifecycle, PreMulSumScalesEachRank) {
  initAll(2);
  std::vector<double> out(2);
  forEachRank([&](int r) {
    double scalar = r == 0 ? 2.0 : -3.0, x = 5.0;
    hetcclRedOp_t op;
    ASSERT_EQ(hetcclRedOpCreatePreMulSum(&op, &scalar, hetcclFloat64, hetcclScalarHostImmediate, comms_[r]), hetcclSuccess);
    ASSERT_EQ(hetcclAllReduce(&x, &out[r], 1, hetcclFloat64, op, comms_[r], nullptr), hetcclSuccess);
    EXPECT_EQ(hetcclRedOpDestroy(op, comms_[r]), hetcclSuccess);
  });
  EXPECT_EQ(out[0], -5.0);  // 2*5 + (-3)*5
  EXPECT_EQ(out[1], -5.0);
}

TEST_F(Lifecycle, SplitByColorOrderedByKey) {
  initAll(4);
  std::vector<hetcclComm_t> child(4, nullptr);
  std::vector<int> childRank(4, -1), childSize(4, -1);
  std::vector<int32_t> sums(4, 0);
  forEachRank([&](int r) {
    int color = r == 3 ? HETCCL_SPLIT_NOCOLOR : r % 2;  // {0, 2} and {1}; rank 3 opts out
    int key = -r;                                         // reverse order inside a color
    ASSERT_EQ(hetcclCommSplit(comms_[r], color, key, &child[r], nullptr), hetcclSuccess) << hetcclGetLastError(nullptr);
    if (!child[r]) return;
    hetcclCommUserRank(child[r], &childRank[r]);
    hetcclCommCount(child[r], &childSize[r]);
    int32_t v = r;
    ASSERT_EQ(hetcclAllReduce(&v, &sums[r], 1, hetcclInt32, hetcclSum, child[r], nullptr), hetcclSuccess);
  });
  EXPECT_EQ(child[3], nullptr);
  EXPECT_EQ(childSize[0], 2);
  EXPECT_EQ(childRank[0], 1);  // key 0 > key -2
  EXPECT_EQ(childRank[2], 0);
  EXPECT_EQ(childSize[1], 1);
  EXPECT_EQ(sums[0], 2);
  EXPECT_EQ(sums[2], 2);
  EXPECT_EQ(sums[1], 1);
  forEachRank([&](int r) {
    if (child[r]) {
      EXPECT_EQ(hetcclCommDestroy(child[r]), hetcclSuccess);
    }
  });
}

TEST_F(Lifecycle, FinalizeThenDestroy) {
  initAll(2);
  forEachRank([&](int r) {
    EXPECT_EQ(hetcclCommFinalize(comms_[r]), hetcclSuccess);
    float x = 1;
    EXPECT_EQ(hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, comms_[r], nullptr), hetcclInvalidUsage);
    EXPECT_EQ(hetcclCommDestroy(comms_[r]), hetcclSuccess);
    comms_[r] = nullptr;
  });
  EXPECT_EQ(hetcclCommDestroy(nullptr), hetcclSuccess);
}

TEST_F(Lifecycle, AbortReleasesABlockedRankPromptly) {
  initAll(2);
  hetcclResult_t blocked = hetcclSuccess;
  std::thread waiter([&] {
    float x = 1;  // rank 1 never joins: rank 0 waits until aborted
    blocked = hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, comms_[0], nullptr);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(hetcclCommAbort(comms_[0]), hetcclSuccess);
  waiter.join();
  comms_[0] = nullptr;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(blocked, hetcclSuccess);
  // A new communicator can be created in the same process afterwards.
  hetcclCommAbort(comms_[1]);
  comms_[1] = nullptr;
  initAll(2);
  std::vector<int32_t> out(2);
  forEachRank([&](int r) {
    int32_t v = 21;
    ASSERT_EQ(hetcclAllReduce(&v, &out[r], 1, hetcclInt32, hetcclSum, comms_[r], nullptr), hetcclSuccess);
  });
  EXPECT_EQ(out[0], 42);
}

}  // namespace
}  // namespace hetccl::test
