#include "values.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

namespace hetccl::test {
namespace {

/// IEEE binary16 pattern nearest to d (ties to even; past the largest finite value after rounding: +-Inf),
/// from the format's definition: d scaled by the quantum of its binade (2^(e-10), e >= -14 the unbiased
/// exponent; exact, a power of two) and rounded once to an integer q in the current (nearest-even) mode,
/// whose pattern is ((e + 14) << 10) + q (a q of 2^11 carries into the exponent; e = -14, q < 2^10: a
/// subnormal). Written here rather than with the compiler's _Float16, which clang before 15 lacks on x86
/// (its __fp16 gave other results: 9641d07). Checked equal to g++ 12's _Float16 conversion on every half,
/// every midpoint of two adjacent halves and the doubles next to it, and 6*10^7 other doubles.
uint16_t toFloat16(double d) {
  const uint16_t sign = std::signbit(d) ? 0x8000u : 0u;
  if (std::isnan(d)) return static_cast<uint16_t>(sign | 0x7e00u);
  const double magnitude = std::fabs(d);
  if (magnitude >= 65520.0) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504 (or Inf)
  if (magnitude == 0) return sign;
  const int e = std::max(std::ilogb(magnitude), -14);
  const long q = std::lrint(std::ldexp(magnitude, 10 - e));  // 0..2^11
  return static_cast<uint16_t>(sign | ((static_cast<long>(e + 14) << 10) + q));
}

uint16_t toBfloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t lsb = (bits >> 16) & 1u;  // round to nearest even (inputs here are finite)
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

/// Value of fp8 pattern b by the format's definition (E4M3: bias 7, 3 mantissa bits; E5M2: bias 15, 2).
double fp8Value(bool e4m3, int b) {
  const int m = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int e = (b & 0x7f) >> m, f = b & ((1 << m) - 1);
  const int top = e4m3 ? 15 : 31;
  if (e == top && (!e4m3 || f == (1 << m) - 1)) return e4m3 || f ? std::nan("") : HUGE_VAL;
  const double v = e == 0 ? std::ldexp(f, 1 - bias - m) : std::ldexp(f + (1 << m), e - bias - m);
  return (b & 0x80) ? -v : v;
}

/// The finite fp8 pattern nearest to d (ties to the even pattern), saturating: only for finite d. The
/// search is the definition (every pattern compared); a per-thread table of the 256 values and a cache of
/// the answers only keep it cheap (coll_check converts millions of elements of few distinct values).
uint8_t toFp8(bool e4m3, double d) {
  thread_local std::array<std::array<double, 256>, 2> values = [] {
    std::array<std::array<double, 256>, 2> v{};
    for (int b = 0; b < 256; ++b) v[0][b] = fp8Value(false, b), v[1][b] = fp8Value(true, b);
    return v;
  }();
  thread_local std::array<std::unordered_map<double, uint8_t>, 2> cache;
  if (auto it = cache[e4m3].find(d); it != cache[e4m3].end() && std::signbit(d) == std::signbit(it->first))
    return it->second;
  int best = -1;
  double bestDistance = 0;
  for (int b = 0; b < 256; ++b) {
    const double v = values[e4m3][b];
    if (!std::isfinite(v) || std::signbit(v) != std::signbit(d)) continue;
    const double distance = std::fabs(v - d);
    if (best < 0 || distance < bestDistance || (distance == bestDistance && (b & 1) == 0)) best = b, bestDistance = distance;
  }
  if (!std::signbit(d) || d != 0) cache[e4m3].emplace(d, static_cast<uint8_t>(best));  // -0.0 == 0.0 as a key
  return static_cast<uint8_t>(best);
}

}  // namespace

bool isFp8Type(hetcclDataType_t t) { return t == hetcclFloat8e4m3 || t == hetcclFloat8e5m2; }

size_t typeSize(hetcclDataType_t t) {
  switch (t) {
    case hetcclInt8: case hetcclUint8: case hetcclFloat8e4m3: case hetcclFloat8e5m2: return 1;
    case hetcclFloat16: case hetcclBfloat16: return 2;
    case hetcclInt32: case hetcclUint32: case hetcclFloat32: return 4;
    default: return 8;
  }
}

bool isUnsignedType(hetcclDataType_t t) { return t == hetcclUint8 || t == hetcclUint32 || t == hetcclUint64; }
bool isFloatType(hetcclDataType_t t) {
  return t == hetcclFloat16 || t == hetcclFloat32 || t == hetcclFloat64 || t == hetcclBfloat16 || isFp8Type(t);
}

void storeDouble(hetcclDataType_t t, double d, void* dst) {
  switch (t) {
    case hetcclFloat16: {
      const uint16_t h = toFloat16(d);
      std::memcpy(dst, &h, 2);
      return;
    }
    case hetcclBfloat16: {
      uint16_t b = toBfloat16(static_cast<float>(d));
      std::memcpy(dst, &b, 2);
      return;
    }
    case hetcclFloat32: {
      float f = static_cast<float>(d);
      std::memcpy(dst, &f, 4);
      return;
    }
    case hetcclFloat64: std::memcpy(dst, &d, 8); return;
    case hetcclFloat8e4m3:
    case hetcclFloat8e5m2: {
      const uint8_t b = toFp8(t == hetcclFloat8e4m3, d);
      std::memcpy(dst, &b, 1);
      return;
    }
    default: storeInt(t, static_cast<int64_t>(d), dst);
  }
}

void storeInt(hetcclDataType_t t, int64_t v, void* dst) {
  if (isFloatType(t)) return storeDouble(t, static_cast<double>(v), dst);
  uint64_t u = static_cast<uint64_t>(v);  // two's complement: the low bytes are the wrapped value
  std::memcpy(dst, &u, typeSize(t));      // little-endian
}

void referenceReduce(hetcclDataType_t t, hetcclRedOp_t op, int nranks, uint64_t i, void* dst) {
  const bool isU = isUnsignedType(t);
  if (isFp8Type(t) && op == hetcclAvg) {  // rank 0's input times fp8(float(1/n)), rounded; the others are 0
    const bool e4m3 = t == hetcclFloat8e4m3;
    const double scale = fp8Value(e4m3, toFp8(e4m3, static_cast<float>(1.0 / nranks)));
    return storeDouble(t, static_cast<double>(elementInput(t, 0, i, op)) * scale + 0.0, dst);
  }
  const bool premul = op == hetcclNumOps;
  hetcclRedOp_t base = premul ? hetcclSum : op;
  int64_t acc = 0;
  for (int r = 0; r < nranks; ++r) {
    int64_t v = elementInput(t, r, i, base);
    if (premul) v *= premulScalar(r);
    if (r == 0) {
      acc = v;
      continue;
    }
    switch (base) {
      case hetcclProd: acc *= v; break;
      case hetcclMax: acc = std::max(acc, v); break;
      case hetcclMin: acc = std::min(acc, v); break;
      default: acc += v;
    }
  }
  if (base != hetcclAvg) return storeInt(t, acc, dst);
  if (isFloatType(t)) return storeDouble(t, static_cast<double>(acc) / nranks, dst);
  if (isU) {
    // The library sums in the narrow unsigned type (no wrap here: sums are small) and divides.
    return storeInt(t, static_cast<int64_t>(static_cast<uint64_t>(acc) / static_cast<uint64_t>(nranks)), dst);
  }
  storeInt(t, acc / nranks, dst);  // truncation toward zero, as C++ and the library
}

}  // namespace hetccl::test
