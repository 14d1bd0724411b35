// Device element operators of the GPU reduction kernels, single-source for CUDA and HIP. They compute
// exactly what src/device/host/reduce_ops.hpp computes, so a GPU and a CPU rank produce the same bits:
//  - integers wrap (arithmetic in the unsigned type);
//  - float16 / bfloat16 load exactly into float, compute in float, store rounded to nearest even;
//  - floating Max/Min are symmetric bit for bit: a NaN on either side gives the canonical quiet NaN,
//    max(+0,-0) = +0 and min(+0,-0) = -0 in either order;
//  - a NaN stored into float16 / bfloat16 gets the host's encoding (sign, quiet bit, top payload bits).
// Only NaNs created by arithmetic (inf - inf, 0 * inf) may differ from the host's bits: the vendors'
// default NaNs differ (x86 sets the sign bit). Finite inputs always give identical bits.
//  - fp8 (E4M3, E5M2) loads exactly into float, computes in float and stores with the shared integer
//    conversion of src/device/base/fp8_format.hpp (nearest even, saturating, every NaN 0x7f), so every
//    result, NaNs included, is bit-identical to the host's; fp8 Max/Min ignore a NaN operand (NCCL's rule).
#pragma once

#include <stdint.h>

#include "device/base/fp8_format.hpp"
#include "device/gpu/gpu_alias.hpp"

namespace hetccl::gpu {

/// Storage of the 16-bit float formats as raw bits (trivial types, so they fit in vector-load unions).
struct HalfBits {
  uint16_t bits;
};
struct Bfloat16Bits {
  uint16_t bits;
};

/// How an element type is loaded for arithmetic (Compute) and stored back.
template <typename T>
struct ElementTraits {
  using Compute = T;
  __device__ static T load(T v) { return v; }
  __device__ static T store(T v) { return v; }
};

template <>
struct ElementTraits<HalfBits> {
  using Compute = float;
  __device__ static float load(HalfBits v) { return __half2float(__ushort_as_half(v.bits)); }
  __device__ static HalfBits store(float f) {
    if (f != f) {  // NaN: the host's encoding (sign | quiet | top 10 payload bits)
      const uint32_t b = __float_as_uint(f);
      return HalfBits{static_cast<uint16_t>(((b >> 16) & 0x8000u) | 0x7e00u | ((b >> 13) & 0x3ffu))};
    }
    return HalfBits{__half_as_ushort(__float2half_rn(f))};
  }
};

template <>
struct ElementTraits<Bfloat16Bits> {
  using Compute = float;
  __device__ static float load(Bfloat16Bits v) { return __bfloat162float(__ushort_as_bfloat16(v.bits)); }
  __device__ static Bfloat16Bits store(float f) {
    if (f != f) return Bfloat16Bits{static_cast<uint16_t>((__float_as_uint(f) >> 16) | 0x40u)};
    return Bfloat16Bits{__bfloat16_as_ushort(__float2bfloat16_rn(f))};
  }
};

/// Storage of the fp8 formats as raw bits.
struct Fp8E4M3Bits {
  uint8_t bits;
};
struct Fp8E5M2Bits {
  uint8_t bits;
};

template <typename Bits, const fp8::Format& kFormat>
struct Fp8Traits {
  using Compute = float;
  __device__ static float load(Bits v) { return __uint_as_float(fp8::toFloatBits(v.bits, kFormat)); }
  __device__ static Bits store(float f) { return Bits{fp8::fromFloatBits(__float_as_uint(f), kFormat)}; }
};
template <>
struct ElementTraits<Fp8E4M3Bits> : Fp8Traits<Fp8E4M3Bits, fp8::kE4M3> {};
template <>
struct ElementTraits<Fp8E5M2Bits> : Fp8Traits<Fp8E5M2Bits, fp8::kE5M2> {};

/// Unsigned integer of the same width (wrapping arithmetic), for the integer element types.
template <typename C> struct UnsignedOf;
template <> struct UnsignedOf<int8_t> { using type = uint8_t; };
template <> struct UnsignedOf<uint8_t> { using type = uint8_t; };
template <> struct UnsignedOf<int32_t> { using type = uint32_t; };
template <> struct UnsignedOf<uint32_t> { using type = uint32_t; };
template <> struct UnsignedOf<int64_t> { using type = uint64_t; };
template <> struct UnsignedOf<uint64_t> { using type = uint64_t; };

template <typename C>
constexpr bool kIsFloat = false;
template <> inline constexpr bool kIsFloat<float> = true;
template <> inline constexpr bool kIsFloat<double> = true;

struct SumOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      return a + b;
    } else {
      using U = typename UnsignedOf<C>::type;
      return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    }
  }
};

struct ProdOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      return a * b;
    } else {  // 8-bit operands promote to int: 255 * 255 fits, the truncating store wraps
      using U = typename UnsignedOf<C>::type;
      return static_cast<C>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    }
  }
};

__device__ inline float pickSignedZero(float a, float b, bool max) {
  const uint32_t x = __float_as_uint(a), y = __float_as_uint(b);
  return __uint_as_float(max ? (x & y) : (x | y));
}
__device__ inline double pickSignedZero(double a, double b, bool max) {
  const unsigned long long x = __double_as_longlong(a), y = __double_as_longlong(b);
  return __longlong_as_double(max ? (x & y) : (x | y));
}
__device__ inline float quietNan(float) { return __uint_as_float(0x7fc00000u); }
__device__ inline double quietNan(double) { return __longlong_as_double(0x7ff8000000000000ll); }

/// The larger (kMax) or smaller of a and b, symmetric for floats as described at the top.
template <bool kMax>
struct MinMaxOp {
  template <typename C>
  __device__ static C apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      C r = kMax ? (a > b ? a : b) : (a < b ? a : b);
      r = a == b ? pickSignedZero(a, b, kMax) : r;  // equal values differ only as +0 / -0
      return (a != a || b != b) ? quietNan(a) : r;
    } else {
      if constexpr (kMax) return a > b ? a : b;
      else return a < b ? a : b;
    }
  }
};
using MaxOp = MinMaxOp<true>;
using MinOp = MinMaxOp<false>;

/// Max/Min of the fp8 types (NCCL's __hmax / __hmin): a NaN operand is ignored, two NaNs give NaN, +0 > -0.
template <bool kMax>
struct NanIgnoringMinMaxOp {
  __device__ static float apply(float a, float b) {
    if (a != a) return b;
    if (b != b) return a;
    return MinMaxOp<kMax>::apply(a, b);
  }
};

}  // namespace hetccl::gpu
