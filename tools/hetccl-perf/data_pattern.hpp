// Input values and expected results of hetccl-perf's exact check. Every rank computes them the same way:
// inputs are small non-negative integers depending on rank and element index, chosen per operator so
// that every reduction is exact in every type (no rounding, so any order of operations gives the same
// bits), and integer overflow wraps the same way in the reference as in the library.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "perf_options.hpp"

namespace hetccl::perf {

/// Input element `index` of `rank` for a reduction with `op` over `nranks` ranks. `narrow` (the fp8 types):
/// values whose partial results stay exact in E5M2; fp8 Avg (PreMulSum by fp8(1/nranks), as NCCL) is exact
/// only for nranks 1, 2, 4, 8 (inputs 1, result 1), so other rank counts check it with zeros.
int64_t reductionInput(OpKind op, int rank, int nranks, size_t index, bool narrow);
/// PreMulSum factor of `rank` (1 or 2).
int64_t preMulScalar(int rank);
/// The reduction over all ranks of reductionInput(op, r, nranks, index), as the library must compute it.
int64_t reductionResult(OpKind op, int nranks, size_t index, bool narrow);
/// True for the types that need narrow inputs (fp8).
inline bool needsNarrowInputs(hetcclDataType_t t) { return t == hetcclFloat8e4m3 || t == hetcclFloat8e5m2; }
/// Input element `index` of `rank` for collectives that only move data (0..100).
int64_t movementInput(int rank, size_t index);
/// Value written to output buffers before a collective, to catch elements it failed to write.
inline constexpr int64_t kSentinel = -1;

/// Bits of the element of `type` closest to the integer v: exact for the small values used here; integers
/// wrap to the type's width.
uint64_t encodeElement(hetcclDataType_t type, int64_t v) noexcept;

/// Calls body(bitsType) with a value of the unsigned integer type as wide as `type`'s elements.
template <typename Body>
void withElementBits(const TypeSpec& type, Body&& body) {
  switch (type.size) {
    case 1: body(uint8_t{}); break;
    case 2: body(uint16_t{}); break;
    case 4: body(uint32_t{}); break;
    default: body(uint64_t{}); break;
  }
}

/// Writes value(i) for i in [0, count) as elements of `type` to dst.
template <typename ValueFn>
void fillElements(const TypeSpec& type, void* dst, size_t count, ValueFn&& value) {
  withElementBits(type, [&](auto bits) {
    using U = decltype(bits);
    auto* out = static_cast<unsigned char*>(dst);
    for (size_t i = 0; i < count; ++i) {
      const U e = static_cast<U>(encodeElement(type.type, value(i)));
      std::memcpy(out + i * sizeof(U), &e, sizeof(U));
    }
  });
}

/// Number of elements i in [0, count) of `actual` whose bits differ from expected(i).
template <typename ValueFn>
size_t countMismatches(const TypeSpec& type, const void* actual, size_t count, ValueFn&& expected) {
  size_t wrong = 0;
  withElementBits(type, [&](auto bits) {
    using U = decltype(bits);
    const auto* in = static_cast<const unsigned char*>(actual);
    for (size_t i = 0; i < count; ++i) {
      U got;
      std::memcpy(&got, in + i * sizeof(U), sizeof(U));
      wrong += got != static_cast<U>(encodeElement(type.type, expected(i))) ? 1 : 0;
    }
  });
  return wrong;
}

}  // namespace hetccl::perf
