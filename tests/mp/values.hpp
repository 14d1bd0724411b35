// Test data and reference results for the multi-process checks. Inputs are small integers, so every
// reduction is exact in every type whatever the order; the reference folds ranks in rank order in
// int64 (integers wrap exactly as the narrow type would) and converts once. float16 rounds the double
// scaled by its binade's quantum (std::lrint), bfloat16 a bit-level rounding written here and fp8 a
// nearest-pattern search over the formats' definitions, all independent of hetccl's own conversions.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "hetccl/hetccl.h"

namespace hetccl::test {

/// Input element i of rank r, for operator `op` (products stay within +-2^8, sums within +-4*nranks).
inline int64_t inputValue(int r, uint64_t i, hetcclRedOp_t op, bool isUnsigned) {
  uint64_t h = static_cast<uint64_t>(r) * 131 + i * 7;
  if (op == hetcclProd) {
    // Two declarations and a pointer: g++ 12 with -fsanitize=address miscompiles the indexing of a
    // conditional expression between two arrays declared together (seen: wrong element at -O0).
    static const int64_t kSigned[5] = {1, 2, 1, -1, 1};
    static const int64_t kUnsigned[5] = {1, 2, 1, 3, 1};
    const int64_t* table = isUnsigned ? kUnsigned : kSigned;
    return table[h % 5];
  }
  return isUnsigned ? static_cast<int64_t>(h % 9) : static_cast<int64_t>(h % 9) - 4;
}

/// PreMulSum scalar of rank r.
inline int64_t premulScalar(int r) { return r % 3 + 1; }

/// Input of the fp8 types: every partial result stays an integer exact in E5M2 (|x| <= 8) whatever the
/// order: sums and PreMulSum from ranks 0-3 only (|sum| <= 7 with the scalars 1, 2, 3, 1), products of
/// +-1 and 2 from ranks 0-2, max/min any small value; Avg (PreMulSum by fp8(1/n), as NCCL) from rank 0
/// only (-5..5), so the result is fp8(input * fp8(1/n)) whatever the order — which differs from
/// sum-then-divide for some inputs (5 / 3 in E4M3: 1.625, NCCL's rule: 5 * 0.34375 -> 1.75).
inline int64_t fp8InputValue(int r, uint64_t i, hetcclRedOp_t op) {
  const uint64_t h = static_cast<uint64_t>(r) * 131 + i * 7;
  switch (op) {
    case hetcclProd: {
      static const int64_t kValues[5] = {1, 2, 1, -1, 1};
      return r < 3 ? kValues[h % 5] : 1;
    }
    case hetcclMax:
    case hetcclMin: return static_cast<int64_t>(h % 9) - 4;
    case hetcclAvg: return r == 0 ? static_cast<int64_t>(h % 11) - 5 : 0;
    default: return r < 4 ? static_cast<int64_t>(h % 3) - 1 : 0;
  }
}

bool isFp8Type(hetcclDataType_t t);

/// Input element i of rank r of type t for operator op (PreMulSum passes hetcclSum).
inline int64_t elementInput(hetcclDataType_t t, int r, uint64_t i, hetcclRedOp_t op) {
  if (isFp8Type(t)) return fp8InputValue(r, i, op);
  const bool isUnsigned = t == hetcclUint8 || t == hetcclUint32 || t == hetcclUint64;
  return inputValue(r, i, op, isUnsigned);
}

size_t typeSize(hetcclDataType_t t);
bool isUnsignedType(hetcclDataType_t t);
bool isFloatType(hetcclDataType_t t);

/// Stores integer `v` (wrapping for integer types) or the double `d` (floats) as one element.
void storeInt(hetcclDataType_t t, int64_t v, void* dst);
void storeDouble(hetcclDataType_t t, double d, void* dst);

/// Reference reduction over ranks 0..n-1 of inputValue(r, i) (scaled for PreMulSum), stored into dst.
/// `op` is hetcclSum..hetcclAvg, or hetcclNumOps to mean PreMulSum with premulScalar().
void referenceReduce(hetcclDataType_t t, hetcclRedOp_t op, int nranks, uint64_t i, void* dst);

}  // namespace hetccl::test
