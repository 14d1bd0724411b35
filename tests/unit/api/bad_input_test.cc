// Bad input through the C API: a clear error code, a last-error message saying what is wrong, and no
// side effect (the output buffer is untouched, the communicator still works).
#include <climits>
#include <cstdint>
#include <cstring>

#include "api_fixture.hpp"

namespace hetccl::test {
namespace {

class BadInput : public ApiTest {
 protected:
  void SetUp() override { initAll(2); }
  /// Expects `r` to be `code` with a last-error message containing `needle`.
  void expectError(hetcclResult_t r, hetcclResult_t code, const std::string& needle) {
    EXPECT_EQ(r, code);
    std::string msg = hetcclGetLastError(comms_[0]);
    EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg;
  }
  /// After a rejected call, both ranks can still all-reduce correctly.
  void expectStillWorks() {
    std::vector<int32_t> out(2, 0);
    forEachRank([&](int r) {
      int32_t v = r + 1;
      ASSERT_EQ(hetcclAllReduce(&v, &out[r], 1, hetcclInt32, hetcclSum, comms_[r], nullptr), hetcclSuccess);
    });
    EXPECT_EQ(out[0], 3);
    EXPECT_EQ(out[1], 3);
  }
};

TEST_F(BadInput, NullBuffersWithElements) {
  float out[4] = {7, 7, 7, 7};
  expectError(hetcclAllReduce(nullptr, out, 4, hetcclFloat32, hetcclSum, comms_[0], nullptr), hetcclInvalidArgument,
              "sendbuff is null");
  EXPECT_EQ(out[0], 7.0f);
  expectError(hetcclAllGather(out, nullptr, 1, hetcclFloat32, comms_[0], nullptr), hetcclInvalidArgument,
              "recvbuff is null");
  expectStillWorks();
}

TEST_F(BadInput, NullBuffersWithZeroCountAreFine) {
  forEachRank([&](int r) {
    EXPECT_EQ(hetcclAllReduce(nullptr, nullptr, 0, hetcclFloat32, hetcclSum, comms_[r], nullptr), hetcclSuccess);
  });
}

TEST_F(BadInput, InvalidTypeAndOp) {
  float x = 1;
  expectError(hetcclAllReduce(&x, &x, 1, static_cast<hetcclDataType_t>(42), hetcclSum, comms_[0], nullptr),
              hetcclInvalidArgument, "invalid data type 42");
  expectError(hetcclAllReduce(&x, &x, 1, hetcclFloat32, static_cast<hetcclRedOp_t>(99), comms_[0], nullptr),
              hetcclInvalidArgument, "invalid reduction operator 99");
  expectError(hetcclAllReduce(&x, &x, 1, hetcclFloat32, static_cast<hetcclRedOp_t>(-1), comms_[0], nullptr),
              hetcclInvalidArgument, "invalid reduction operator -1");
  EXPECT_EQ(x, 1.0f);
  expectStillWorks();
}

TEST_F(BadInput, RootAndPeerOutOfRange) {
  float x = 1;
  expectError(hetcclBroadcast(&x, &x, 1, hetcclFloat32, 2, comms_[0], nullptr), hetcclInvalidArgument, "root 2");
  expectError(hetcclReduce(&x, &x, 1, hetcclFloat32, hetcclSum, -1, comms_[0], nullptr), hetcclInvalidArgument,
              "root -1");
  expectError(hetcclSend(&x, 1, hetcclFloat32, 5, comms_[0], nullptr), hetcclInvalidArgument, "peer 5");
  expectError(hetcclRecv(&x, 1, hetcclFloat32, -3, comms_[0], nullptr), hetcclInvalidArgument, "peer -3");
  expectStillWorks();
}

TEST_F(BadInput, CountsThatOverflow) {
  float x = 1;
  expectError(hetcclAllReduce(&x, &x, SIZE_MAX, hetcclFloat32, hetcclSum, comms_[0], nullptr), hetcclInvalidArgument,
              "overflows");
  expectError(hetcclAllGather(&x, &x, SIZE_MAX / 2, hetcclInt8, comms_[0], nullptr), hetcclInvalidArgument,
              "overflows");
  size_t counts[2] = {SIZE_MAX, 1}, displs[2] = {0, 0};
  expectError(hetcclAlltoAllv(&x, counts, displs, &x, counts, displs, hetcclFloat32, comms_[0], nullptr),
              hetcclInvalidArgument, "overflows");
  expectError(hetcclAlltoAllv(&x, nullptr, displs, &x, counts, displs, hetcclFloat32, comms_[0], nullptr),
              hetcclInvalidArgument, "null");
  expectStillWorks();
}

TEST_F(BadInput, NullCommAndOutputs) {
  float x = 1;
  EXPECT_EQ(hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, nullptr, nullptr), hetcclInvalidArgument);
  EXPECT_NE(std::string(hetcclGetLastError(nullptr)).find("comm is null"), std::string::npos);
  EXPECT_EQ(hetcclCommCount(comms_[0], nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclCommUserRank(nullptr, nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclGetVersion(nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclGetUniqueId(nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclCommInitRank(nullptr, 1, hetcclUniqueId{}, 0), hetcclInvalidArgument);
}

TEST_F(BadInput, GarbageUniqueIdIsRejected) {
  hetcclUniqueId id;
  std::memset(id.internal, 0x5a, sizeof id.internal);
  hetcclComm_t c = nullptr;
  EXPECT_EQ(hetcclCommInitRank(&c, 2, id, 0), hetcclInvalidArgument);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(hetcclGetLastError(nullptr)).find("magic"), std::string::npos) << hetcclGetLastError(nullptr);
}

TEST_F(BadInput, BadRankOrSize) {
  hetcclUniqueId id;
  ASSERT_EQ(hetcclGetUniqueId(&id), hetcclSuccess);
  hetcclComm_t c = nullptr;
  EXPECT_EQ(hetcclCommInitRank(&c, 2, id, 2), hetcclInvalidArgument);
  EXPECT_EQ(hetcclCommInitRank(&c, 0, id, 0), hetcclInvalidArgument);
}

TEST_F(BadInput, ConfigWithoutInitializer) {
  hetcclConfig_t config = HETCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  hetcclComm_t child = nullptr;
  EXPECT_EQ(hetcclCommSplit(comms_[0], 0, 0, &child, &config), hetcclInvalidArgument);
  EXPECT_EQ(child, nullptr);
  expectStillWorks();
}

TEST_F(BadInput, GroupEndWithoutStart) {
  EXPECT_EQ(hetcclGroupEnd(), hetcclInvalidUsage);
  EXPECT_NE(std::string(hetcclGetLastError(nullptr)).find("GroupEnd without"), std::string::npos);
}

TEST_F(BadInput, PreMulSumMisuse) {
  float scalar = 2;
  hetcclRedOp_t op;
  EXPECT_EQ(hetcclRedOpCreatePreMulSum(&op, &scalar, hetcclFloat32, hetcclScalarDevice, comms_[0]), hetcclInvalidUsage);
  EXPECT_EQ(hetcclRedOpCreatePreMulSum(&op, nullptr, hetcclFloat32, hetcclScalarHostImmediate, comms_[0]),
            hetcclInvalidArgument);
  ASSERT_EQ(hetcclRedOpCreatePreMulSum(&op, &scalar, hetcclFloat32, hetcclScalarHostImmediate, comms_[0]), hetcclSuccess);
  double d = 1;
  expectError(hetcclAllReduce(&d, &d, 1, hetcclFloat64, op, comms_[0], nullptr), hetcclInvalidArgument,
              "created for float32");
  EXPECT_EQ(hetcclRedOpDestroy(op, comms_[0]), hetcclSuccess);
  EXPECT_EQ(hetcclRedOpDestroy(op, comms_[0]), hetcclInvalidArgument);
  EXPECT_EQ(hetcclRedOpDestroy(hetcclSum, comms_[0]), hetcclInvalidArgument);
}

}  // namespace
}  // namespace hetccl::test
