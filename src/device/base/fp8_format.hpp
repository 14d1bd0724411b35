// The two 8-bit float formats (OCP FP8: E4M3 and E5M2) as bit patterns, and their conversions to and from
// the bits of an IEEE binary32 float, written with integer operations only so that the host reduction
// kernels (C++20), the CUDA kernels and HIP kernels (C++17, __host__ __device__) share one implementation
// and produce the same bits everywhere. No vendor intrinsic is used.
//
// Formats:  E4M3: bias 7, 3 mantissa bits, no infinity, NaN = S.1111.111 (0x7f/0xff), max finite 448.
//           E5M2: bias 15, 2 mantissa bits, IEEE-like: infinity S.11111.00, NaN S.11111.{01,10,11},
//           max finite 57344.
//
// fp8 -> float is exact (every fp8 value is a float). float -> fp8 is the conversion NCCL 2.28's fp8
// kernels use: the __nv_fp8_e4m3 / __nv_fp8_e5m2 constructors of cuda_fp8.hpp, i.e. saturation mode
// __NV_SATFINITE with round to nearest even:
//  - finite values round to nearest, ties to even, subnormal results exact (no flush to zero), a result
//    that rounds to zero keeps the sign;
//  - a magnitude that rounds past the largest finite value, and +-infinity, become +-max finite
//    (448 / 57344): the conversion never produces infinity, not even for E5M2;
//  - any NaN becomes the positive canonical NaN 0x7f (both formats).
#pragma once

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETCCL_FP8_FN __host__ __device__ inline constexpr
#else
#define HETCCL_FP8_FN inline constexpr
#endif

namespace hetccl::fp8 {

/// Shape of one 8-bit float format.
struct Format {
  uint32_t mantissaBits;  ///< stored mantissa bits (3 or 2)
  int32_t bias;           ///< exponent bias (7 or 15)
  uint8_t maxFinite;      ///< bit pattern of the largest finite value, sign clear
  bool hasInfinity;       ///< E5M2: exponent all ones is Inf/NaN; E4M3: only S.1111.111 is NaN
};
inline constexpr Format kE4M3{3, 7, 0x7e, false};
inline constexpr Format kE5M2{2, 15, 0x7b, true};

/// The NaN every conversion to fp8 produces.
inline constexpr uint8_t kCanonicalNan = 0x7f;

/// True if `b` is a NaN pattern of `f`.
HETCCL_FP8_FN bool isNan(uint8_t b, Format f) {
  const uint32_t magnitude = b & 0x7fu;
  return f.hasInfinity ? magnitude > 0x7cu : magnitude == 0x7fu;
}

/// Bits of the float equal to fp8 value `b` (exact). NaNs become quiet float NaNs with the same sign.
HETCCL_FP8_FN uint32_t toFloatBits(uint8_t b, Format f) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exponentMask = (0x7fu >> f.mantissaBits);
  const uint32_t exponent = (b >> f.mantissaBits) & exponentMask;
  const uint32_t mantissa = b & ((1u << f.mantissaBits) - 1u);
  if (isNan(b, f)) return sign | 0x7fc00000u;
  if (f.hasInfinity && exponent == exponentMask) return sign | 0x7f800000u;  // E5M2 infinity
  if (exponent != 0)  // normal: rebias, widen the mantissa
    return sign | (static_cast<uint32_t>(static_cast<int32_t>(exponent) - f.bias + 127) << 23) |
           (mantissa << (23 - f.mantissaBits));
  if (mantissa == 0) return sign;  // +-0
  // Subnormal: mantissa * 2^(1 - bias - mantissaBits). Normalise on the highest set bit p.
  uint32_t p = 0;
  while ((mantissa >> (p + 1)) != 0) ++p;
  const int32_t floatExponent = static_cast<int32_t>(p) + 1 - f.bias - static_cast<int32_t>(f.mantissaBits) + 127;
  const uint32_t fraction = (mantissa << (23 - p)) & 0x7fffffu;
  return sign | (static_cast<uint32_t>(floatExponent) << 23) | fraction;
}

/// Nearest fp8 pattern of the float with bits `x`, as described at the top (ties to even, saturating).
HETCCL_FP8_FN uint8_t fromFloatBits(uint32_t x, Format f) {
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return kCanonicalNan;
  if (magnitude == 0x7f800000u) return static_cast<uint8_t>(sign | f.maxFinite);
  const int32_t exponent = static_cast<int32_t>(magnitude >> 23) - 127;  // unbiased; -127 for float subnormals
  if (magnitude < 0x00800000u) return sign;  // float subnormal (< 2^-126): far below any fp8 value
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;  // 24 bits, value = s * 2^(exponent-23)
  const int32_t minNormalExponent = 1 - f.bias;
  uint32_t shift = 0;  // bits of the float significand dropped by the rounding
  uint32_t base = 0;   // fp8 bits of the exponent field, before adding the rounded significand
  if (exponent >= minNormalExponent) {
    shift = 23 - f.mantissaBits;
    // code = ((exponent + bias) << m) + (q - 2^m): adding the rounded q lets a carry move into the exponent.
    base = (static_cast<uint32_t>(exponent + f.bias) << f.mantissaBits) - (1u << f.mantissaBits);
  } else {
    // Subnormal fp8: units of 2^(minNormalExponent - m); q = significand * 2^(exponent - 23 - that).
    const int32_t s = minNormalExponent - static_cast<int32_t>(f.mantissaBits) - (exponent - 23);
    if (s > 24) return sign;  // below half the smallest subnormal: rounds to zero
    shift = static_cast<uint32_t>(s);
  }
  uint32_t q = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (q & 1u) != 0)) ++q;
  uint32_t code = base + q;  // a subnormal that rounds up to 2^m is the smallest normal, correctly
  if (code > f.maxFinite) code = f.maxFinite;  // saturate (also keeps E5M2 off its Inf/NaN patterns)
  return static_cast<uint8_t>(sign | code);
}

}  // namespace hetccl::fp8
