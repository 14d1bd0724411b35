// Delegation to the vendor library (src/exec/vendor/vendor_route.hpp) on a communicator of one rank: Avg and
// PreMulSum reductions must not reach the vendor's single-rank path, which NCCL 2.28.9 gets wrong (the
// last element of an odd-count 8-byte one; fp8 ones refused). The simulated vendor emulates that defect
// (emulateSingleRankScalingDefect), so a route that hands them to it fails here; the results are
// compared with the host kernels (an Avg of one input is that input; a PreMulSum is input * scalar).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap_harness.hpp"
#include "exec/vendor/vendor_route.hpp"
#include "device/host/reduce.hpp"
#include "sim_gpu.hpp"
#include "sim_vendor.hpp"
#include "stream_test_support.hpp"

namespace hetccl::test::sim {
namespace {

using bootstrap::testing::ScopedEnv;

/// One rank: a bootstrap, a one-member simulated vendor communicator, a stream; the defect on.
class OneRankRouteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ranks_ = bootstrap::testing::joinAll(bootstrap::createUniqueId(), 1);
    ASSERT_TRUE(ranks_[0].bootstrap) << ranks_[0].error;
    comm_ = vendor_.createComm(*ranks_[0].bootstrap, {0});
    ASSERT_EQ(plugin().streamCreate(&stream_), HETCCL_GPU_OK);
    emulateSingleRankScalingDefect(true);
  }
  void TearDown() override {
    emulateSingleRankScalingDefect(false);
    comm_.reset();
    plugin().streamDestroy(stream_);
  }
  void finish() {
    ASSERT_EQ(plugin().streamSynchronize(stream_), HETCCL_GPU_OK);
    ASSERT_TRUE(waitIdle(std::chrono::seconds(10)));
  }

  ScopedEnv timeout_{"HETCCL_TIMEOUT", test::stallSeconds()};
  std::vector<bootstrap::testing::JoinResult> ranks_;
  SimVendorCcl vendor_;
  std::unique_ptr<domain::DomainComm> comm_;
  void* stream_ = nullptr;
};

/// Inputs whose every byte differs from the last one's neighbour (so a flipped byte shows).
std::vector<unsigned char> input(size_t bytes, DataType type) {
  std::vector<unsigned char> v(bytes);
  const size_t es = dataTypeSize(type);
  for (size_t i = 0; i < bytes / es; ++i) {
    if (type == DataType::Float64) {
      const double d = 1.0 + static_cast<double>(i % 1000) / 8;
      std::memcpy(&v[i * es], &d, 8);
    } else if (type == DataType::Int64) {
      const int64_t x = static_cast<int64_t>(i % 977) - 400;
      std::memcpy(&v[i * es], &x, 8);
    } else if (type == DataType::Float32) {
      const float f = 2.0f + static_cast<float>(i % 100) / 4;
      std::memcpy(&v[i * es], &f, 4);
    } else {  // fp8: small positive codes
      v[i] = static_cast<unsigned char>(0x30 + i % 16);
    }
  }
  return v;
}

ReduceOp premulsum(DataType type) {
  ReduceOp op;
  op.kind = RedOpKind::PreMulSum;
  if (type == DataType::Float64) {
    const double s = 0.5;
    std::memcpy(op.scalar, &s, 8);
  } else if (type == DataType::Int64) {
    const int64_t s = 3;
    std::memcpy(op.scalar, &s, 8);
  } else if (type == DataType::Float32) {
    const float s = 0.25f;
    std::memcpy(op.scalar, &s, 4);
  } else {
    op.scalar[0] = 0x38;  // fp8 e4m3 1.0
  }
  return op;
}

TEST_F(OneRankRouteTest, EmulatedDefectIsReal) {
  // The direct vendor call shows the emulated defect: otherwise the test below could not fail.
  const size_t count = 65537;
  std::vector<unsigned char> in = input(count * 8, DataType::Float64), out(count * 8);
  ReduceOp avg;
  avg.kind = RedOpKind::Avg;
  comm_->allReduce(in.data(), out.data(), count, DataType::Float64, avg, stream_);
  finish();
  EXPECT_NE(std::memcmp(in.data(), out.data(), out.size()), 0);
  EXPECT_EQ(std::memcmp(in.data(), out.data(), out.size() - 8), 0);
}

TEST_F(OneRankRouteTest, AvgAndPreMulSumOfOneRankAreExact) {
  using algo::CollKind;
  int cases = 0;
  for (CollKind kind : {CollKind::AllReduce, CollKind::Reduce, CollKind::ReduceScatter})
    for (DataType type : {DataType::Float64, DataType::Int64, DataType::Float32, DataType::Float8e4m3})
      for (RedOpKind opKind : {RedOpKind::Avg, RedOpKind::PreMulSum})
        for (size_t count : {size_t{1}, size_t{65537}})
          for (bool inPlace : {false, true}) {
            const size_t bytes = count * dataTypeSize(type);
            const std::vector<unsigned char> original = input(bytes, type);
            std::vector<unsigned char> send = original, recv(bytes, 0xAB);
            algo::CollOp op;
            op.kind = kind;
            op.type = type;
            op.count = count;
            op.root = 0;
            if (opKind == RedOpKind::PreMulSum) op.op = premulsum(type);
            else op.op.kind = RedOpKind::Avg;
            op.sendbuff = send.data();
            op.recvbuff = inPlace ? send.data() : recv.data();
            std::vector<unsigned char> want(bytes);
            if (opKind == RedOpKind::PreMulSum) device::hostScale(want.data(), original.data(), count, type, op.op.scalar);
            else want = original;

            const std::string what = concat(algo::collKindName(kind), " ", dataTypeName(type), " ", redOpName(opKind),
                                            " count ", count, inPlace ? " in place" : "");
            const algo::CollOp ops[] = {op};
            ASSERT_NO_THROW(runOnVendor(*comm_, ops, stream_, &plugin())) << what;
            finish();
            const unsigned char* got = inPlace ? send.data() : recv.data();
            EXPECT_EQ(std::memcmp(got, want.data(), bytes), 0) << what;
            ++cases;
          }
  EXPECT_EQ(cases, 3 * 4 * 2 * 2 * 2);
}

TEST_F(OneRankRouteTest, PreMulSumWithoutThePluginIsAClearError) {
  std::vector<unsigned char> buf(64);
  algo::CollOp op;
  op.kind = algo::CollKind::AllReduce;
  op.type = DataType::Float64;
  op.count = 8;
  op.op = premulsum(DataType::Float64);
  op.sendbuff = op.recvbuff = buf.data();
  const algo::CollOp ops[] = {op};
  try {
    runOnVendor(*comm_, ops, stream_, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const InvalidUsage& e) {
    EXPECT_NE(std::string(e.what()).find("needs the GPU plugin"), std::string::npos) << e.what();
  }
  finish();
}

}  // namespace
}  // namespace hetccl::test::sim
