#include "data_pattern.hpp"

#include <algorithm>

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

}  // namespace

int64_t reductionInput(OpKind op, int rank, int nranks, size_t index) {
  switch (op) {
    case OpKind::Prod: return 1 + static_cast<int64_t>((static_cast<size_t>(rank) + index) % 2);
    case OpKind::Avg: return static_cast<int64_t>((index * 3) % 11) + 1 + avgOffset(rank, nranks);
    default: return 1 + static_cast<int64_t>((static_cast<size_t>(rank) * 7 + index * 3) % 11);
  }
}

int64_t preMulScalar(int rank) { return 1 + rank % 2; }

int64_t reductionResult(OpKind op, int nranks, size_t index) {
  int64_t acc = reductionInput(op, 0, nranks, index) * (op == OpKind::PreMulSum ? preMulScalar(0) : 1);
  for (int r = 1; r < nranks; ++r) {
    const int64_t v = reductionInput(op, r, nranks, index);
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
    default: return static_cast<uint64_t>(v);  // integers: the caller keeps the low bytes (wraps)
  }
}

}  // namespace hetccl::perf
