// fp8 (E4M3, E5M2) host reductions: every one of the 65,536 input pairs of each type, for Sum, Prod,
// Max, Min and PreMulSum's scaling, against a reference written here from the formats' definitions.
//
// The reference follows NCCL 2.28's fp8 kernels literally (src/device/reduce_kernel.h: the operands are
// converted to half, __hadd / __hmul / __hmax / __hmin computed in half, the result converted to fp8 by
// the __nv_fp8_* constructor, i.e. __NV_SATFINITE): decode with ldexp from the bit fields, compute
// exactly in double, round to half (nearest even, Inf past 65504), then round that half value to fp8
// (nearest even, +-Inf and overflow saturate to the largest finite value, NaN -> 0x7f) and look the
// result up in a table of all 256 decoded patterns. It shares no code with src/device/base/fp8_format.hpp.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "device/host/reduce.hpp"

namespace hetccl::device {
namespace {

struct RefFormat {
  const char* name;
  DataType type;
  int exponentBits, mantissaBits, bias;
  bool ieeeSpecials;  // E5M2: exponent all ones = Inf / NaN; E4M3: only S.1111.111 is NaN
  double maxFinite;
};
constexpr RefFormat kRefE4M3{"f8e4m3", DataType::Float8e4m3, 4, 3, 7, false, 448.0};
constexpr RefFormat kRefE5M2{"f8e5m2", DataType::Float8e5m2, 5, 2, 15, true, 57344.0};

/// Value of pattern `b` by the format's definition.
double decode(const RefFormat& f, uint8_t b) {
  const bool negative = (b & 0x80) != 0;
  const int exponent = (b >> f.mantissaBits) & ((1 << f.exponentBits) - 1);
  const int mantissa = b & ((1 << f.mantissaBits) - 1);
  const int allOnes = (1 << f.exponentBits) - 1;
  double v;
  if (f.ieeeSpecials && exponent == allOnes) {
    v = mantissa == 0 ? INFINITY : NAN;
  } else if (!f.ieeeSpecials && exponent == allOnes && mantissa == (1 << f.mantissaBits) - 1) {
    v = NAN;
  } else if (exponent == 0) {
    v = std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  } else {
    v = std::ldexp(mantissa + (1 << f.mantissaBits), exponent - f.bias - f.mantissaBits);
  }
  return negative ? -v : v;
}

/// x rounded to nearest even with `precision` significant bits and smallest normal 2^minExponent, with an
/// unbounded exponent range upwards (overflow is the caller's business).
double roundTo(double x, int precision, int minExponent) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int exponent = std::max(std::ilogb(x), minExponent);
  const double ulp = std::ldexp(1.0, exponent - (precision - 1));
  return std::nearbyint(x / ulp) * ulp;  // FE_TONEAREST: ties to even; keeps the sign of a zero
}

double toHalf(double x) {
  const double r = roundTo(x, 11, -14);
  return std::fabs(r) > 65504.0 ? std::copysign(INFINITY, r) : r;
}

/// The fp8 pattern NCCL stores for the half value h (cvt.rn.satfinite / __NV_SATFINITE).
uint8_t toFp8(const RefFormat& f, double h) {
  if (std::isnan(h)) return 0x7f;
  double r = std::isinf(h) ? h : roundTo(h, f.mantissaBits + 1, 1 - f.bias);
  if (std::fabs(r) > f.maxFinite) r = std::copysign(f.maxFinite, r);
  for (int b = 0; b < 256; ++b) {
    const double v = decode(f, static_cast<uint8_t>(b));
    if (v == r && std::signbit(v) == std::signbit(r)) return static_cast<uint8_t>(b);
  }
  ADD_FAILURE() << f.name << ": no pattern for " << r;
  return 0;
}

/// __hmax / __hmin: a NaN operand is ignored (two NaNs give NaN); +0 is larger than -0.
double halfMinMax(double a, double b, bool max) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0 && b == 0) {
    const bool negative = max ? (std::signbit(a) && std::signbit(b)) : (std::signbit(a) || std::signbit(b));
    return negative ? -0.0 : 0.0;
  }
  return max ? std::max(a, b) : std::min(a, b);
}

uint8_t reference(const RefFormat& f, RedOpKind op, uint8_t a, uint8_t b) {
  const double x = decode(f, a), y = decode(f, b);
  switch (op) {
    case RedOpKind::Sum: return toFp8(f, toHalf(x + y));  // x + y and x * y are exact in double
    case RedOpKind::Prod: return toFp8(f, toHalf(x * y));
    case RedOpKind::Max: return toFp8(f, halfMinMax(x, y, true));
    case RedOpKind::Min: return toFp8(f, halfMinMax(x, y, false));
    default: break;
  }
  ADD_FAILURE() << "unexpected op";
  return 0;
}

/// Runs the library on all 65,536 (dst, src) pairs at once (one call: also exercises the blocked loop).
std::vector<uint8_t> libraryAllPairs(DataType type, RedOpKind op) {
  std::vector<uint8_t> dst(65536), src(65536);
  for (int i = 0; i < 65536; ++i) {
    dst[i] = static_cast<uint8_t>(i >> 8);
    src[i] = static_cast<uint8_t>(i & 0xff);
  }
  ReduceFn fn = hostReduceFn(type, op);
  EXPECT_NE(fn, nullptr);
  if (fn) fn(dst.data(), src.data(), dst.size());
  return dst;
}

void expectAllPairs(const RefFormat& f, RedOpKind op, const std::vector<uint8_t>& got, const char* what) {
  int wrong = 0;
  for (int i = 0; i < 65536; ++i) {
    const uint8_t a = static_cast<uint8_t>(i >> 8), b = static_cast<uint8_t>(i & 0xff);
    const uint8_t want = reference(f, op, a, b);
    if (got[i] == want) continue;
    if (++wrong <= 8)
      ADD_FAILURE() << f.name << " " << what << "(0x" << std::hex << int(a) << " = " << decode(f, a) << ", 0x"
                    << int(b) << " = " << decode(f, b) << "): got 0x" << int(got[i]) << ", want 0x" << int(want);
  }
  EXPECT_EQ(wrong, 0) << f.name << " " << what << ": wrong results among 65536 pairs";
}

class Fp8AllPairs : public ::testing::TestWithParam<RefFormat> {};

TEST_P(Fp8AllPairs, SumProdMaxMinMatchNcclsRoundingForEveryPair) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const RefFormat& f = GetParam();
  for (RedOpKind op : {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min})
    expectAllPairs(f, op, libraryAllPairs(f.type, op), redOpName(op));
}

TEST_P(Fp8AllPairs, PreMulSumScalingMatchesNcclsRoundingForEveryPair) {
  // NCCL's preOp: fp8(__hmul(half(x), half(scalar))), the same rounding as Prod.
  const RefFormat& f = GetParam();
  std::vector<uint8_t> got(65536);
  std::vector<uint8_t> src(256);
  for (int b = 0; b < 256; ++b) src[b] = static_cast<uint8_t>(b);
  for (int a = 0; a < 256; ++a) {
    const uint8_t scalar = static_cast<uint8_t>(a);
    hostScale(got.data() + a * 256, src.data(), 256, f.type, &scalar);
  }
  // got[a*256 + b] = b * scalar a: the pair (a, b) of Prod, which is symmetric in the reference.
  expectAllPairs(f, RedOpKind::Prod, got, "premulsum scale");
}

TEST_P(Fp8AllPairs, DivideRoundsTheQuotient) {
  // Not used by fp8 Avg (that is PreMulSum, as in NCCL), but part of hostDivide's contract.
  const RefFormat& f = GetParam();
  std::vector<uint8_t> buf(256);
  for (int b = 0; b < 256; ++b) buf[b] = static_cast<uint8_t>(b);
  hostDivide(buf.data(), buf.size(), f.type, 3);
  for (int b = 0; b < 256; ++b) {
    // The quotient rounded to float (as a float division does), then to fp8.
    const double q = roundTo(decode(f, static_cast<uint8_t>(b)) / 3, 24, -126);
    EXPECT_EQ(buf[b], toFp8(f, q)) << f.name << " 0x" << std::hex << b << " / 3";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8AllPairs, ::testing::Values(kRefE4M3, kRefE5M2),
                         [](const auto& info) { return std::string(info.param.name); });

// A few results spelled out, so the rule is readable from the tests too.
TEST(Fp8Rule, SaturatesNeverInfAndCanonicalNan) {
  auto one = [](DataType t, RedOpKind op, uint8_t a, uint8_t b) {
    hostReduceFn(t, op)(&a, &b, 1);
    return a;
  };
  EXPECT_EQ(one(DataType::Float8e4m3, RedOpKind::Sum, 0x7e, 0x7e), 0x7e);  // 448 + 448 -> 448
  EXPECT_EQ(one(DataType::Float8e4m3, RedOpKind::Sum, 0x48, 0x01), 0x48);  // 4 + 2^-9 -> 4
  EXPECT_EQ(one(DataType::Float8e4m3, RedOpKind::Sum, 0x38, 0x18), 0x38);  // 1 + 1/16: tie, to even 1
  EXPECT_EQ(one(DataType::Float8e4m3, RedOpKind::Sum, 0x39, 0x18), 0x3a);  // 1.125 + 1/16: tie, to even 1.25
  EXPECT_EQ(one(DataType::Float8e5m2, RedOpKind::Sum, 0x7c, 0x3c), 0x7b);  // Inf + 1 -> 57344, not Inf
  EXPECT_EQ(one(DataType::Float8e5m2, RedOpKind::Sum, 0x7c, 0xfc), 0x7f);  // Inf - Inf -> NaN 0x7f
  EXPECT_EQ(one(DataType::Float8e4m3, RedOpKind::Prod, 0xff, 0x38), 0x7f);  // -NaN * 1 -> 0x7f
  EXPECT_EQ(one(DataType::Float8e4m3, RedOpKind::Max, 0x7f, 0xb8), 0xb8);  // max(NaN, -1) = -1
  EXPECT_EQ(one(DataType::Float8e5m2, RedOpKind::Min, 0x00, 0x80), 0x80);  // min(+0, -0) = -0
  EXPECT_EQ(one(DataType::Float8e5m2, RedOpKind::Max, 0x80, 0x00), 0x00);  // max(-0, +0) = +0
}

}  // namespace
}  // namespace hetccl::device
