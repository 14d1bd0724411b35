// Element operators of the host reduction kernels (internal to src/device/host). Each operator is a
// struct with `static C apply(C a, C b)` over the compute type C of an element type (see ElementTraits).
//
// Integers wrap on overflow (computed in the unsigned type, so signed overflow is defined). Floating
// Max/Min are symmetric bit for bit: a NaN on either side gives the canonical quiet NaN, and
// max(+0,-0) = +0, min(+0,-0) = -0 in either order.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "device/host/half.hpp"

namespace hetccl::device::host_ops {

/// How an element type is loaded for arithmetic and stored back. Native types compute as themselves;
/// the 16-bit float formats compute in float and round to nearest even on store.
template <typename T>
struct ElementTraits {
  using Compute = T;
  static Compute load(T v) noexcept { return v; }
  static T store(Compute v) noexcept { return v; }
};
template <>
struct ElementTraits<Half> {
  using Compute = float;
  static float load(Half v) noexcept { return Half::toFloat(v); }
  static Half store(float v) noexcept { return Half::fromFloat(v); }
};
template <>
struct ElementTraits<Bfloat16> {
  using Compute = float;
  static float load(Bfloat16 v) noexcept { return Bfloat16::toFloat(v); }
  static Bfloat16 store(float v) noexcept { return Bfloat16::fromFloat(v); }
};
/// fp8 computes in float and stores with fp8::fromFloatBits. NCCL computes in half (__hadd / __hmul on
/// the fp8 values converted to half, then converts to fp8); for two fp8 operands the float result
/// rounded once gives the same bits (sums and products of fp8 values are exact in float or, for E5M2
/// sums, rounded with enough spare precision), which tests/unit/device/fp8_reduce_test.cc checks
/// exhaustively against the literal half-then-fp8 rounding.
template <const fp8::Format& kFormat>
struct ElementTraits<Fp8<kFormat>> {
  using Compute = float;
  static float load(Fp8<kFormat> v) noexcept { return Fp8<kFormat>::toFloat(v); }
  static Fp8<kFormat> store(float v) noexcept { return Fp8<kFormat>::fromFloat(v); }
};

/// Unsigned integer with the same width as the floating type F (for bit operations).
template <typename F>
using BitsOf = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;

struct SumOp {
  template <typename C>
  static C apply(C a, C b) noexcept {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <typename C>
  static C apply(C a, C b) noexcept {
    if constexpr (std::is_integral_v<C>) {
      // 8-bit operands promote to int: 255 * 255 still fits, so the truncating store wraps correctly.
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return a * b;
    }
  }
};

/// Picks `a` or `b` (the larger if kMax, else the smaller), symmetric for floats as described above.
template <bool kMax>
struct MinMaxOp {
  template <typename C>
  static C apply(C a, C b) noexcept {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (kMax) return a > b ? a : b;
      else return a < b ? a : b;
    } else {
      using B = BitsOf<C>;
      const B ba = std::bit_cast<B>(a), bb = std::bit_cast<B>(b);
      // Equal values differ only as +0/-0: AND of the bits picks +0 (max), OR picks -0 (min).
      const C equal = std::bit_cast<C>(kMax ? (ba & bb) : (ba | bb));
      C r = kMax ? (a > b ? a : b) : (a < b ? a : b);
      r = a == b ? equal : r;
      return (a != a || b != b) ? std::numeric_limits<C>::quiet_NaN() : r;
    }
  }
};
using MaxOp = MinMaxOp<true>;
using MinOp = MinMaxOp<false>;

/// Max/Min of the fp8 types, as NCCL's (__hmax / __hmin of half): a NaN operand is ignored (the other
/// one is the result; two NaNs give NaN), +0 is larger than -0. Symmetric bit for bit.
template <bool kMax>
struct NanIgnoringMinMaxOp {
  static float apply(float a, float b) noexcept {
    if (a != a) return b;
    if (b != b) return a;
    return MinMaxOp<kMax>::apply(a, b);
  }
};

}  // namespace hetccl::device::host_ops
