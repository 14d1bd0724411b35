// The AVX2/F16C kernels of float16 and bfloat16 (reduce_x86.hpp) against the portable kernels, bit for
// bit (a sum or product of two NaNs: any NaN): every 16-bit pattern (NaNs, infinities, subnormals, signed
// zeros included) against partners of
// every class, and random operands over odd lengths (block boundaries and tails). The portable kernels
// are checked against double arithmetic in reduce_test.cc and their conversions exhaustively in
// half_conversion_test.cc. Skipped on a CPU without AVX2 and F16C (then hostReduceFn is the portable one).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "device/host/reduce.hpp"
#include "device/host/reduce_x86.hpp"

namespace hetccl::device {
namespace {

constexpr RedOpKind kOps[] = {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min};
const char* opName(RedOpKind op) {
  return op == RedOpKind::Sum ? "sum" : op == RedOpKind::Prod ? "prod" : op == RedOpKind::Max ? "max" : "min";
}

class SixteenBitKernels : public ::testing::TestWithParam<DataType> {
 protected:
  void SetUp() override {
    if (!x86SixteenBitReduceFn(GetParam(), RedOpKind::Sum))
      GTEST_SKIP() << "this CPU has no AVX2/F16C (or is not x86-64): the portable kernels serve every type";
  }
  /// Runs both kernels of `op` on copies of (d, s) and expects the same bits.
  static void expectSame(DataType type, RedOpKind op, const std::vector<uint16_t>& d, const std::vector<uint16_t>& s,
                         const char* what) {
    std::vector<uint16_t> fast = d, portable = d;
    x86SixteenBitReduceFn(type, op)(fast.data(), s.data(), d.size());
    portableHostReduceFn(type, op)(portable.data(), s.data(), d.size());
    const bool half = type == DataType::Float16;
    auto isNan = [&](uint16_t v) { return half ? (v & 0x7fffu) > 0x7c00u : (v & 0x7fffu) > 0x7f80u; };
    for (size_t i = 0; i < d.size(); ++i) {
      // Which operand's payload a sum or product of two NaNs carries is the compiler's choice of operand
      // order (IEEE leaves it open; the portable kernel's vectorised code and the scalar tail differ too):
      // there the result must be a NaN, nothing more.
      if ((op == RedOpKind::Sum || op == RedOpKind::Prod) && isNan(d[i]) && isNan(s[i]) && isNan(fast[i]) &&
          isNan(portable[i]))
        continue;
      if (fast[i] != portable[i]) {
        ADD_FAILURE() << (type == DataType::Float16 ? "float16 " : "bfloat16 ") << opName(op) << " (" << what
                      << "): element " << i << ": 0x" << std::hex << d[i] << " op 0x" << s[i] << " gave 0x" << fast[i]
                      << ", the portable kernel 0x" << portable[i];
        return;
      }
    }
  }
};

TEST_P(SixteenBitKernels, EveryPatternAgainstEveryClassOfPartnerMatchesThePortableKernel) {
  const DataType type = GetParam();
  const bool half = type == DataType::Float16;
  // Zeros, smallest/largest subnormal and normal, ones, values that round at the next step, infinities,
  // quiet and signalling NaNs with payloads, both signs.
  std::vector<uint16_t> partners = half ? std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x3c00,
                                                                 0xbc00, 0x3c01, 0x3555, 0x7c00, 0xfc00, 0x7e00, 0x7d01,
                                                                 0xfe13, 0x5bff, 0x0200, 0x4000}
                                        : std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x7f7f, 0x3f80,
                                                                 0xbf80, 0x3f81, 0x3eab, 0x7f80, 0xff80, 0x7fc0, 0x7f81,
                                                                 0xffa3, 0x4b7f, 0x0040, 0x4000};
  std::vector<uint16_t> d(65536 + 13);  // a tail after the last whole block
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<uint16_t>(i);
  for (RedOpKind op : kOps)
    for (uint16_t p : partners) {
      const std::vector<uint16_t> s(d.size(), p);
      expectSame(type, op, d, s, "every pattern op a partner");
      expectSame(type, op, s, d, "a partner op every pattern");
    }
}

TEST_P(SixteenBitKernels, RandomOperandsOverOddLengthsMatchThePortableKernel) {
  std::mt19937 rng(20261125);
  for (size_t n : {1u, 7u, 31u, 32u, 33u, 95u, 1000003u}) {
    std::vector<uint16_t> d(n), s(n);
    for (size_t i = 0; i < n; ++i) {
      d[i] = static_cast<uint16_t>(rng());
      s[i] = static_cast<uint16_t>(rng());
    }
    for (RedOpKind op : kOps) expectSame(GetParam(), op, d, s, "random operands");
  }
}

TEST_P(SixteenBitKernels, HostReduceFnServesTheFastKernelAndAvgAndPreMulSumAccumulateAsSum) {
  const DataType type = GetParam();
  for (RedOpKind op : kOps) EXPECT_EQ(hostReduceFn(type, op), x86SixteenBitReduceFn(type, op)) << opName(op);
  EXPECT_EQ(x86SixteenBitReduceFn(type, RedOpKind::Avg), x86SixteenBitReduceFn(type, RedOpKind::Sum));
  EXPECT_EQ(x86SixteenBitReduceFn(type, RedOpKind::PreMulSum), x86SixteenBitReduceFn(type, RedOpKind::Sum));
  EXPECT_EQ(x86SixteenBitReduceFn(DataType::Float32, RedOpKind::Sum), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Types, SixteenBitKernels, ::testing::Values(DataType::Float16, DataType::Bfloat16),
                         [](const auto& info) { return info.param == DataType::Float16 ? "float16" : "bfloat16"; });

}  // namespace
}  // namespace hetccl::device
