// float16 / bfloat16 conversions checked against references computed another way: decoding from the
// bit fields with ldexp in double, and encoding by searching the sorted table of all 16-bit values for
// the nearest one (ties to the even pattern).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "device/host/half.hpp"

namespace hetccl::device {
namespace {

struct Format {
  int mantissaBits;
  int exponentBias;
  uint16_t maxFinite;  // largest finite positive pattern
  double infinityAsValue;  // the value the next pattern after maxFinite would have (Inf rounds there)
};
constexpr Format kHalf{10, 15, 0x7bff, 65536.0};
constexpr Format kBf16{7, 127, 0x7f7f, 0x1p128};

/// Value of a finite pattern from its fields, in double.
double decodeReference(const Format& f, uint16_t bits) {
  const int exponentMask = (1 << (15 - f.mantissaBits)) - 1;
  const int exponent = (bits >> f.mantissaBits) & exponentMask;
  const int mantissa = bits & ((1 << f.mantissaBits) - 1);
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, 1 - f.exponentBias - f.mantissaBits)
                                         : std::ldexp(mantissa + (1 << f.mantissaBits), exponent - f.exponentBias - f.mantissaBits);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

bool isNanPattern(const Format& f, uint16_t bits) {
  return (bits & 0x7fff) > (f.maxFinite + 1);  // above the Inf pattern
}

/// Nearest pattern to x (finite float) by table search; ties pick the even pattern.
uint16_t encodeReference(const Format& f, float x) {
  static thread_local std::vector<double> table;
  static thread_local const Format* tableFormat = nullptr;
  if (tableFormat != &f) {
    table.clear();
    for (uint32_t b = 0; b <= f.maxFinite; ++b) table.push_back(decodeReference(f, static_cast<uint16_t>(b)));
    table.push_back(f.infinityAsValue);  // index maxFinite + 1 is the Inf pattern
    tableFormat = &f;
  }
  const double magnitude = std::fabs(static_cast<double>(x));
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (magnitude >= table.back()) return sign | static_cast<uint16_t>(table.size() - 1);
  const auto upper = static_cast<size_t>(std::lower_bound(table.begin(), table.end(), magnitude) - table.begin());
  if (table[upper] == magnitude || upper == 0) return sign | static_cast<uint16_t>(upper);
  const size_t lower = upper - 1;
  const double below = magnitude - table[lower], above = table[upper] - magnitude;
  size_t pick = below < above ? lower : above < below ? upper : (lower % 2 == 0 ? lower : upper);
  return sign | static_cast<uint16_t>(pick);
}

TEST(HalfConversion, DecodesEveryPatternExactly) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float value = halfToFloat(bits);
    if (isNanPattern(kHalf, bits)) {
      ASSERT_TRUE(std::isnan(value)) << std::hex << b;
      ASSERT_EQ(std::signbit(value), (b & 0x8000) != 0) << std::hex << b;
    } else if ((b & 0x7fff) == 0x7c00) {
      ASSERT_TRUE(std::isinf(value)) << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(value), decodeReference(kHalf, bits)) << std::hex << b;
      ASSERT_EQ(std::signbit(value), (b & 0x8000) != 0) << std::hex << b;  // -0 stays -0
    }
  }
}

TEST(HalfConversion, RoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const uint16_t back = floatToHalf(halfToFloat(bits));
    if (isNanPattern(kHalf, bits)) ASSERT_EQ(back, bits | 0x0200) << std::hex << b;  // quieted, payload kept
    else ASSERT_EQ(back, bits) << std::hex << b;
  }
}

TEST(Bfloat16Conversion, DecodesAndRoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float value = bfloat16ToFloat(bits);
    const uint16_t back = floatToBfloat16(value);
    if (isNanPattern(kBf16, bits)) {
      ASSERT_TRUE(std::isnan(value)) << std::hex << b;
      ASSERT_EQ(back, bits | 0x0040) << std::hex << b;
    } else {
      if ((b & 0x7fff) != 0x7f80) {
        ASSERT_EQ(static_cast<double>(value), decodeReference(kBf16, bits)) << std::hex << b;
      }
      ASSERT_EQ(back, bits) << std::hex << b;
    }
  }
}

/// Floats that stress rounding: every midpoint between neighbouring 16-bit values (exact ties), one float
/// ulp either side of it, and random bit patterns.
std::vector<float> roundingProbes(const Format& f) {
  std::vector<float> probes;
  for (uint32_t b = 0; b <= f.maxFinite; ++b) {
    const double mid = (decodeReference(f, static_cast<uint16_t>(b)) +
                        (b == f.maxFinite ? f.infinityAsValue : decodeReference(f, static_cast<uint16_t>(b + 1)))) / 2;
    const auto m = static_cast<float>(mid);
    if (static_cast<double>(m) != mid) continue;  // not representable in float (cannot happen for these formats)
    for (float p : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
      probes.push_back(p);
      probes.push_back(-p);
    }
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    const float r = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (!std::isnan(r)) probes.push_back(r);
  }
  for (float special : {0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.4028235e38f, 65504.0f, 65519.99f, 65520.0f})
    probes.push_back(special);
  return probes;
}

TEST(HalfConversion, EncodesToNearestEvenLikeTableSearch) {
  for (float x : roundingProbes(kHalf)) ASSERT_EQ(floatToHalf(x), encodeReference(kHalf, x)) << x;
}

TEST(Bfloat16Conversion, EncodesToNearestEvenLikeTableSearch) {
  for (float x : roundingProbes(kBf16)) ASSERT_EQ(floatToBfloat16(x), encodeReference(kBf16, x)) << x;
}

TEST(HalfConversion, NanStaysNanWithSign) {
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::quiet_NaN()), 0xfe00);
  EXPECT_EQ(floatToHalf(std::bit_cast<float>(0x7f800001u)), 0x7e00);  // signalling, payload below half's bits
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x7f800001u)), 0x7fc0);
  EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0xff812345u)), 0xffc1);
}

}  // namespace
}  // namespace hetccl::device
