#include "values.hpp"

#include <algorithm>

namespace hetccl::test {
namespace {

uint16_t toBfloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t lsb = (bits >> 16) & 1u;  // round to nearest even (inputs here are finite)
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace

size_t typeSize(hetcclDataType_t t) {
  switch (t) {
    case hetcclInt8: case hetcclUint8: return 1;
    case hetcclFloat16: case hetcclBfloat16: return 2;
    case hetcclInt32: case hetcclUint32: case hetcclFloat32: return 4;
    default: return 8;
  }
}

bool isUnsignedType(hetcclDataType_t t) { return t == hetcclUint8 || t == hetcclUint32 || t == hetcclUint64; }
bool isFloatType(hetcclDataType_t t) {
  return t == hetcclFloat16 || t == hetcclFloat32 || t == hetcclFloat64 || t == hetcclBfloat16;
}

void storeDouble(hetcclDataType_t t, double d, void* dst) {
  switch (t) {
    case hetcclFloat16: {
      _Float16 h = static_cast<_Float16>(d);
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
  const bool premul = op == hetcclNumOps;
  hetcclRedOp_t base = premul ? hetcclSum : op;
  int64_t acc = 0;
  for (int r = 0; r < nranks; ++r) {
    int64_t v = inputValue(r, i, base, isU);
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
