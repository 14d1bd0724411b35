// Host reduction kernels: one plain loop per (type, operator), written so the compiler vectorises it
// (no branches the vectoriser cannot turn into selects, no aliasing assumptions it cannot check).
#include "device/host/reduce.hpp"

#include <array>
#include <cstring>

#include "device/host/reduce_ops.hpp"
#include "device/host/reduce_x86.hpp"

namespace hetccl::device {
namespace {

using host_ops::ElementTraits;

// Elements per inner block: a fixed trip count (and __restrict: dst and src are the same buffer or do not
// overlap, and each element is read before it is written) lets even -O2's cheapest cost model vectorise.
constexpr size_t kBlock = 32;

template <typename T, typename Op>
void reduceTyped(T* __restrict d, const T* __restrict s, size_t count) {
  using Traits = ElementTraits<T>;
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock)
    for (size_t j = i; j < i + kBlock; ++j) d[j] = Traits::store(Op::apply(Traits::load(d[j]), Traits::load(s[j])));
  for (; i < count; ++i) d[i] = Traits::store(Op::apply(Traits::load(d[i]), Traits::load(s[i])));
}

template <typename T, typename Op>
void reduceLoop(void* dst, const void* src, size_t count) {
  reduceTyped<T, Op>(static_cast<T*>(dst), static_cast<const T*>(src), count);
}

/// Accumulate functions of one element type, indexed by Sum, Prod, Max, Min.
template <typename T>
constexpr std::array<ReduceFn, 4> kernelsOf() {
  return {&reduceLoop<T, host_ops::SumOp>, &reduceLoop<T, host_ops::ProdOp>, &reduceLoop<T, host_ops::MaxOp>,
          &reduceLoop<T, host_ops::MinOp>};
}

/// The fp8 types: Max/Min ignore NaN operands, as NCCL's fp8 kernels do.
template <typename T>
constexpr std::array<ReduceFn, 4> fp8KernelsOf() {
  return {&reduceLoop<T, host_ops::SumOp>, &reduceLoop<T, host_ops::ProdOp>,
          &reduceLoop<T, host_ops::NanIgnoringMinMaxOp<true>>, &reduceLoop<T, host_ops::NanIgnoringMinMaxOp<false>>};
}

// Indexed by DataType's value (NCCL's order).
constexpr std::array<std::array<ReduceFn, 4>, kNumDataTypes> kKernels{
    kernelsOf<int8_t>(),   kernelsOf<uint8_t>(), kernelsOf<int32_t>(), kernelsOf<uint32_t>(),
    kernelsOf<int64_t>(),  kernelsOf<uint64_t>(), kernelsOf<Half>(),   kernelsOf<float>(),
    kernelsOf<double>(),   kernelsOf<Bfloat16>(), fp8KernelsOf<Fp8E4M3>(), fp8KernelsOf<Fp8E5M2>(),
};

template <typename T>
void scaleLoop(void* dst, const void* src, size_t count, const void* scalar) {
  using Traits = ElementTraits<T>;
  T factorStorage;
  std::memcpy(&factorStorage, scalar, sizeof(T));
  const auto factor = Traits::load(factorStorage);
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < count; ++i) d[i] = Traits::store(host_ops::ProdOp::apply(Traits::load(s[i]), factor));
}

template <typename T>
void divideLoop(void* buf, size_t count, uint64_t n) {
  using Traits = ElementTraits<T>;
  using C = typename Traits::Compute;
  T* b = static_cast<T*>(buf);
  if constexpr (std::is_floating_point_v<C>) {
    const C divisor = static_cast<C>(n);
    for (size_t i = 0; i < count; ++i) b[i] = Traits::store(Traits::load(b[i]) / divisor);
  } else if constexpr (std::is_signed_v<C>) {
    // In int64 so that a divisor larger than the type's maximum still truncates correctly (-128 / 128 = -1).
    const int64_t divisor = n > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(n);
    for (size_t i = 0; i < count; ++i) b[i] = static_cast<C>(static_cast<int64_t>(b[i]) / divisor);
  } else {
    for (size_t i = 0; i < count; ++i) b[i] = static_cast<C>(static_cast<uint64_t>(b[i]) / n);
  }
}

template <typename T>
struct Typed {
  static void scale(void* d, const void* s, size_t c, const void* f) { scaleLoop<T>(d, s, c, f); }
  static void divide(void* b, size_t c, uint64_t n) { divideLoop<T>(b, c, n); }
};

/// Calls F<T>::run-like visitor with the C++ element type of `type`; returns false for an invalid type.
template <typename Visitor>
bool visitType(DataType type, Visitor&& visit) {
  switch (type) {
    case DataType::Int8: visit(Typed<int8_t>{}); return true;
    case DataType::Uint8: visit(Typed<uint8_t>{}); return true;
    case DataType::Int32: visit(Typed<int32_t>{}); return true;
    case DataType::Uint32: visit(Typed<uint32_t>{}); return true;
    case DataType::Int64: visit(Typed<int64_t>{}); return true;
    case DataType::Uint64: visit(Typed<uint64_t>{}); return true;
    case DataType::Float16: visit(Typed<Half>{}); return true;
    case DataType::Float32: visit(Typed<float>{}); return true;
    case DataType::Float64: visit(Typed<double>{}); return true;
    case DataType::Bfloat16: visit(Typed<Bfloat16>{}); return true;
    case DataType::Float8e4m3: visit(Typed<Fp8E4M3>{}); return true;
    case DataType::Float8e5m2: visit(Typed<Fp8E5M2>{}); return true;
  }
  return false;
}

}  // namespace

ReduceFn hostReduceFn(DataType type, RedOpKind op) noexcept {
  if (ReduceFn fast = x86SixteenBitReduceFn(type, op)) return fast;
  return portableHostReduceFn(type, op);
}

ReduceFn portableHostReduceFn(DataType type, RedOpKind op) noexcept {
  if (!isValidDataType(static_cast<int>(type))) return nullptr;
  const auto& row = kKernels[static_cast<size_t>(type)];
  switch (op) {
    case RedOpKind::Sum:
    case RedOpKind::Avg:
    case RedOpKind::PreMulSum: return row[0];
    case RedOpKind::Prod: return row[1];
    case RedOpKind::Max: return row[2];
    case RedOpKind::Min: return row[3];
  }
  return nullptr;
}

void hostScale(void* dst, const void* src, size_t count, DataType type, const void* scalar) noexcept {
  visitType(type, [&](auto typed) { typed.scale(dst, src, count, scalar); });
}

void hostDivide(void* buf, size_t count, DataType type, uint64_t n) noexcept {
  if (n == 0) return;  // contract: n >= 1; 0 leaves the buffer unchanged rather than dividing by zero
  visitType(type, [&](auto typed) { typed.divide(buf, count, n); });
}

}  // namespace hetccl::device
