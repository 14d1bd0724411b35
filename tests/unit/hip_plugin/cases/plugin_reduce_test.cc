// The plugin's reduction kernels against the fake HIP runtime: every type and operator, scale and divide,
// bit-identical to hetccl's host kernels; argument checks and an asynchronous fault.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "device/host/reduce.hpp"
#include "harness.hpp"
#include "plugin_helpers.hpp"

namespace hip_test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Reductions: every type and operator, against hetccl's host kernels (src/device/host/reduce.hpp).

using hetccl::DataType;
using hetccl::RedOpKind;

std::vector<unsigned char> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

/// Float-like types get finite values (random bits could make NaN payloads, equal either way, but the
/// plugin promises bit-identity for finite inputs only).
std::vector<unsigned char> randomElements(DataType t, size_t count, uint32_t seed) {
  const size_t size = hetccl::dataTypeSize(t);
  std::vector<unsigned char> v = randomBytes(count * size, seed);
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (size_t i = 0; i < count; ++i) {
    unsigned char* e = v.data() + i * size;
    switch (t) {
      case DataType::Float32: { float f = dist(rng); std::memcpy(e, &f, 4); break; }
      case DataType::Float64: { double d = dist(rng); std::memcpy(e, &d, 8); break; }
      case DataType::Float16: { uint16_t h = static_cast<uint16_t>(rng() & 0x43ff); std::memcpy(e, &h, 2); break; }   // |x| < 4
      case DataType::Bfloat16: { uint16_t b = static_cast<uint16_t>((rng() & 0x80ff) | 0x3f00); std::memcpy(e, &b, 2); break; }
      case DataType::Float8e4m3: e[0] = static_cast<unsigned char>(rng() & 0xc7); break;  // exponent small
      case DataType::Float8e5m2: e[0] = static_cast<unsigned char>(rng() & 0x87) | 0x30; break;
      default: break;
    }
  }
  return v;
}

struct ReduceCase {
  size_t count;
  size_t offsetElements;  // misaligns the buffers: the scalar (non-vectorized) path
};

TEST(HipPlugin, ReduceEveryTypeAndOperatorMatchesHost) {
  Stream s;
  const size_t maxCount = 3000;
  DeviceBuffer dst(maxCount * 8 + 64), src(maxCount * 8 + 64);
  const ReduceCase cases[] = {{2053, 0}, {17, 1}, {1, 0}};
  const fakehipStats_t before = F().snapshot();
  for (int t = 0; t < hetccl::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    const size_t size = hetccl::dataTypeSize(type);
    for (int op = 0; op <= static_cast<int>(RedOpKind::PreMulSum); ++op) {
      for (const ReduceCase& c : cases) {
        SCOPED_TRACE(std::string(hetccl::dataTypeName(type)) + " op " + std::to_string(op) + " count " +
                     std::to_string(c.count) + " offset " + std::to_string(c.offsetElements));
        const size_t bytes = c.count * size;
        std::vector<unsigned char> a = randomElements(type, c.count, 11 + t * 31 + op);
        std::vector<unsigned char> b = randomElements(type, c.count, 977 + t * 17 + op);
        char* d = dst.as() + c.offsetElements * size;
        char* sp = src.as() + c.offsetElements * size;
        ASSERT_GPU_OK(P().memcpySync(d, a.data(), bytes));
        ASSERT_GPU_OK(P().memcpySync(sp, b.data(), bytes));
        ASSERT_GPU_OK(P().reduce(d, sp, c.count, t, op, s));
        ASSERT_GPU_OK(P().streamSynchronize(s));
        std::vector<unsigned char> got(bytes);
        ASSERT_GPU_OK(P().memcpySync(got.data(), d, bytes));
        const RedOpKind accumulate = op >= static_cast<int>(RedOpKind::Avg) ? RedOpKind::Sum : static_cast<RedOpKind>(op);
        hetccl::device::hostReduceFn(type, accumulate)(a.data(), b.data(), c.count);
        ASSERT_EQ(got, a);
      }
    }
  }
  // In place (dst == src).
  std::vector<unsigned char> a = randomElements(DataType::Int32, 100, 5);
  ASSERT_GPU_OK(P().memcpySync(dst.p, a.data(), 400));
  ASSERT_GPU_OK(P().reduce(dst.p, dst.p, 100, static_cast<int>(DataType::Int32), static_cast<int>(RedOpKind::Sum), s));
  ASSERT_GPU_OK(P().streamSynchronize(s));
  std::vector<unsigned char> got(400);
  ASSERT_GPU_OK(P().memcpySync(got.data(), dst.p, 400));
  hetccl::device::hostReduceFn(DataType::Int32, RedOpKind::Sum)(a.data(), a.data(), 100);
  EXPECT_EQ(got, a);
  const fakehipStats_t after = F().snapshot();
  EXPECT_EQ(after.badAccesses, before.badAccesses) << F().lastBadAccess();
  EXPECT_EQ(after.compiles, 0u) << "gfx90a has a built-in code object: nothing to compile";
}

TEST(HipPlugin, ScaleAndDivideEveryTypeMatchHost) {
  NoBadAccess noBadAccess;
  Stream s;
  const size_t count = 1027;
  DeviceBuffer dst(count * 8 + 64), src(count * 8 + 64);
  for (int t = 0; t < hetccl::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    const size_t size = hetccl::dataTypeSize(type);
    const size_t bytes = count * size;
    SCOPED_TRACE(hetccl::dataTypeName(type));
    std::vector<unsigned char> in = randomElements(type, count, 300 + t);
    std::vector<unsigned char> scalar = randomElements(type, 1, 400 + t);
    std::vector<unsigned char> expect(bytes), got(bytes);
    // scale: dst = src * scalar (out of place, then with dst misaligned by one element).
    for (size_t offset : {size_t{0}, size_t{1}}) {
      char* d = dst.as() + offset * size;
      ASSERT_GPU_OK(P().memcpySync(src.p, in.data(), bytes));
      ASSERT_GPU_OK(P().scale(d, src.p, count, t, scalar.data(), s));
      ASSERT_GPU_OK(P().streamSynchronize(s));
      ASSERT_GPU_OK(P().memcpySync(got.data(), d, bytes));
      hetccl::device::hostScale(expect.data(), in.data(), count, type, scalar.data());
      ASSERT_EQ(got, expect) << "scale, offset " << offset;
    }
    // divide: buf /= n for several n (n = 0 changes nothing).
    for (uint64_t n : {uint64_t{1}, uint64_t{3}, uint64_t{7}, uint64_t{0}}) {
      ASSERT_GPU_OK(P().memcpySync(dst.p, in.data(), bytes));
      ASSERT_GPU_OK(P().divide(dst.p, count, t, n, s));
      ASSERT_GPU_OK(P().streamSynchronize(s));
      ASSERT_GPU_OK(P().memcpySync(got.data(), dst.p, bytes));
      expect = in;
      hetccl::device::hostDivide(expect.data(), count, type, n);
      ASSERT_EQ(got, expect) << "divide by " << n;
    }
  }
}

TEST(HipPlugin, ReductionArgumentsAreChecked) {
  Stream s;
  DeviceBuffer d(64);
  const float one = 1.0f;
  EXPECT_EQ(P().reduce(d.p, d.p, 4, hetccl::kNumDataTypes, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, d.p, 4, -1, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, d.p, 4, 7, 6, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, d.p, 4, 7, -1, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(nullptr, d.p, 4, 7, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, nullptr, 4, 7, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().reduce(nullptr, nullptr, 0, 7, 0, s));
  EXPECT_EQ(P().scale(d.p, d.p, 4, 12, &one, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().scale(d.p, d.p, 4, 7, nullptr, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().scale(nullptr, d.p, 4, 7, &one, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().divide(d.p, 4, 12, 2, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().divide(nullptr, 4, 7, 2, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().streamSynchronize(s));
}

TEST(HipPlugin, AsynchronousFaultSurfacesAtSynchronize) {
  // A kernel touching memory the device cannot access (plain host memory) fails the stream, as on a GPU:
  // the plugin reports it at the next synchronisation, naming the call.
  Stream s;
  std::vector<float> pageable(64, 1.0f);
  DeviceBuffer d(256);
  const uint64_t badBefore = F().snapshot().badAccesses;
  EXPECT_GPU_OK(P().reduce(d.p, pageable.data(), 64, static_cast<int>(DataType::Float32), 0, s));
  expectRuntimeError(P().streamSynchronize(s), "hipStreamSynchronize", "hipErrorIllegalAddress");
  EXPECT_EQ(F().snapshot().badAccesses, badBefore + 1);
}

}  // namespace
}  // namespace hip_test
