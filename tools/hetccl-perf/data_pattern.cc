#include "data_pattern.hpp"

#include <algorithm>
#include <bit>

namespace hetccl::perf {
namespace {

/// Avg inputs are base + 1 + offset(rank) with offsets summing to 0 over the ranks, so the sum is
/// nranks * (base + 1) and the average is exact in every type and rounding mode.
int64_t avgOffset(int rank, int nranks) {
  if (rank % 2 == 1) return -1;
  return rank + 1 < nranks ? 1 : 0;  // the last rank of an odd count has no partner
}

/// IEEE binary16 bits of an integer (exact up to 2048 in magnitude, truncated beyond, Inf past 65504).
uint16_t integerToHalf(int64_t v) {
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  const uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (m == 0) return sign;
  const int exponent = std::bit_width(m) - 1;
  if (exponent > 15) return sign | 0x7c00;
  const uint64_t mantissa = exponent >= 10 ? (m >> (exponent - 10)) : (m << (10 - exponent));
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | (mantissa & 0x3ff));
}

/// fp8 bits of an integer, written here (not hetccl's conversion): exact for the small values the narrow
/// inputs use (|v| <= 16 in E4M3, <= 8 in E5M2), the mantissa truncated beyond (movement inputs up to 100).
uint8_t integerToFp8(int64_t v, int mantissaBits, int bias) {
  const uint8_t sign = v < 0 ? 0x80 : 0;
  const uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (m == 0) return sign;
  const int exponent = std::bit_width(m) - 1;
  const uint64_t mantissa = exponent >= mantissaBits ? (m >> (exponent - mantissaBits)) : (m << (mantissaBits - exponent));
  return static_cast<uint8_t>(sign | ((exponent + bias) << mantissaBits) | (mantissa & ((1u << mantissaBits) - 1)));
}

/// fp8 inputs: partial results stay small integers exact in E5M2 (<= 8) whatever the order of operations.
int64_t narrowInput(OpKind op, int rank, int nranks, size_t index) {
  const size_t h = static_cast<size_t>(rank) + index;
  switch (op) {
    case OpKind::Prod: return rank < 3 ? 1 + static_cast<int64_t>(h % 2) : 1;
    case OpKind::Max:
    case OpKind::Min: return 1 + static_cast<int64_t>((static_cast<size_t>(rank) * 7 + index * 3) % 8);
    case OpKind::Avg: return std::has_single_bit(static_cast<unsigned>(nranks)) && nranks <= 8 ? 1 : 0;
    default: return rank < 4 && h % 2 == 0 ? 1 : 0;
  }
}

}  // namespace

int64_t reductionInput(OpKind op, int rank, int nranks, size_t index, bool narrow) {
  if (narrow) return narrowInput(op, rank, nranks, index);
  switch (op) {
    case OpKind::Prod: return 1 + static_cast<int64_t>((static_cast<size_t>(rank) + index) % 2);
    case OpKind::Avg: return static_cast<int64_t>((index * 3) % 11) + 1 + avgOffset(rank, nranks);
    default: return 1 + static_cast<int64_t>((static_cast<size_t>(rank) * 7 + index * 3) % 11);
  }
}

int64_t preMulScalar(int rank) { return 1 + rank % 2; }

int64_t reductionResult(OpKind op, int nranks, size_t index, bool narrow) {
  int64_t acc = reductionInput(op, 0, nranks, index, narrow) * (op == OpKind::PreMulSum ? preMulScalar(0) : 1);
  for (int r = 1; r < nranks; ++r) {
    const int64_t v = reductionInput(op, r, nranks, index, narrow);
    switch (op) {
      case OpKind::Prod: acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v)); break;
      case OpKind::Max: acc = std::max(acc, v); break;
      case OpKind::Min: acc = std::min(acc, v); break;
      case OpKind::PreMulSum: acc += preMulScalar(r) * v; break;
      default: acc += v; break;
    }
  }
  return op == OpKind::Avg ? acc / nranks : acc;
}

int64_t movementInput(int rank, size_t index) {
  return static_cast<int64_t>((static_cast<size_t>(rank) * 13 + index) % 101);
}

uint64_t encodeElement(hetcclDataType_t type, int64_t v) noexcept {
  switch (type) {
    case hetcclFloat16: return integerToHalf(v);
    case hetcclBfloat16: return std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16;
    case hetcclFloat32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    case hetcclFloat64: return std::bit_cast<uint64_t>(static_cast<double>(v));
    case hetcclFloat8e4m3: return integerToFp8(v, 3, 7);
    case hetcclFloat8e5m2: return integerToFp8(v, 2, 15);
    default: return static_cast<uint64_t>(v);  // integers: the caller keeps the low bytes (wraps)
  }
}

}  // namespace hetccl::perf
