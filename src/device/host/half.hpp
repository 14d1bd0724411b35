// Conversions between float and the 16-bit float formats (IEEE binary16 "float16" and bfloat16), done
// with integer operations on the bit patterns so they behave the same on every host compiler; storage
// wrappers of the 16-bit and 8-bit float formats for the host reduction kernels.
//
// Contract of every float -> 16-bit conversion: round to nearest, ties to even; values past the largest
// finite 16-bit value (after rounding) become +-Inf; subnormal results are produced exactly (no flush to
// zero); NaN stays NaN with its sign and the top payload bits, and the quiet bit set. The 16-bit -> float
// conversions are exact (every 16-bit value is a float), NaNs keep sign and payload and become quiet.
#pragma once

#include <bit>
#include <cstdint>

#include "device/base/fp8_format.hpp"

namespace hetccl::device {

/// Exact value of an IEEE binary16 bit pattern as a float.
inline float halfToFloat(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {  // Inf or NaN: keep the payload, quiet a NaN
    const uint32_t quiet = mantissa != 0 ? 0x400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  if (exponent != 0)  // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // zero or subnormal: mantissa * 2^-24, exact in float
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
}

/// Nearest IEEE binary16 bit pattern of `x` (ties to even).
inline uint16_t floatToHalf(float x) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)  // NaN: quiet, top 10 payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x47800000u)  // >= 65536 (or Inf): Inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal half (or rounds up to Inf just below 65536)
    uint32_t rebased = magnitude - (112u << 23);   // exponent bias 127 -> 15
    rebased += 0xfffu + ((rebased >> 13) & 1u);   // round the 13 dropped bits to nearest even
    return static_cast<uint16_t>(sign | (rebased >> 13));  // a carry moves into the exponent correctly
  }
  if (magnitude < 0x33000000u)  // < 2^-25: rounds to zero
    return static_cast<uint16_t>(sign);
  // Subnormal half: value / 2^-24 rounded to an integer. value = m * 2^(e - 150), m with hidden bit.
  const uint32_t exponent = magnitude >> 23;  // 102..112
  const uint32_t m = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - exponent;  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1u);
  q += (rest > halfway || (rest == halfway && (q & 1u))) ? 1u : 0u;  // may reach 0x400: smallest normal
  return static_cast<uint16_t>(sign | q);
}

/// Exact value of a bfloat16 bit pattern (the upper half of a float); NaNs become quiet.
inline float bfloat16ToFloat(uint16_t b) noexcept {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  if ((bits & 0x7fffffffu) > 0x7f800000u) bits |= 0x400000u;
  return std::bit_cast<float>(bits);
}

/// Nearest bfloat16 bit pattern of `x` (ties to even).
inline uint16_t floatToBfloat16(float x) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u)  // NaN: quiet, keep sign and top payload bits
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  // Adding 0x7fff plus the kept lowest bit rounds to nearest even; a carry into the exponent (also up to
  // Inf) is the correct result.
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// Storage wrappers so the reduction templates can tell the 16-bit formats apart from uint16_t.
struct Half {
  uint16_t bits;
  static float toFloat(Half v) noexcept { return halfToFloat(v.bits); }
  static Half fromFloat(float f) noexcept { return Half{floatToHalf(f)}; }
};
struct Bfloat16 {
  uint16_t bits;
  static float toFloat(Bfloat16 v) noexcept { return bfloat16ToFloat(v.bits); }
  static Bfloat16 fromFloat(float f) noexcept { return Bfloat16{floatToBfloat16(f)}; }
};
static_assert(sizeof(Half) == 2 && sizeof(Bfloat16) == 2);

/// The 8-bit float formats (conversions in src/device/base/fp8_format.hpp: exact loads, stores that round
/// to nearest even and saturate to the largest finite value, as NCCL's fp8 kernels do).
template <const fp8::Format& kFormat>
struct Fp8 {
  uint8_t bits;
  static float toFloat(Fp8 v) noexcept { return std::bit_cast<float>(fp8::toFloatBits(v.bits, kFormat)); }
  static Fp8 fromFloat(float f) noexcept { return Fp8{fp8::fromFloatBits(std::bit_cast<uint32_t>(f), kFormat)}; }
};
using Fp8E4M3 = Fp8<fp8::kE4M3>;
using Fp8E5M2 = Fp8<fp8::kE5M2>;
static_assert(sizeof(Fp8E4M3) == 1 && sizeof(Fp8E5M2) == 1);

}  // namespace hetccl::device
