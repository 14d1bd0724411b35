// Host (CPU) reduction kernels for every type and operator. float16 / bfloat16 are computed in float
// and rounded to nearest-even. Max/Min propagate NaN symmetrically (op(a,b) == op(b,a) bitwise), so a
// reduction gives the same bits whichever rank computes it. The fp8 types follow NCCL 2.28's rule
// (docs/DESIGN.md, "fp8 reductions"): computed in float, rounded to nearest even and saturated to the
// largest finite value (never Inf), every NaN result is 0x7f, Max/Min ignore a NaN operand.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

namespace hetccl::device {

/// dst[i] = dst[i] (op) src[i] for `count` elements. dst and src are the same buffer or do not overlap.
/// Integers wrap on overflow.
using ReduceFn = void (*)(void* dst, const void* src, size_t count);

/// The accumulate function of (type, op). Avg and PreMulSum accumulate as Sum (their scaling is
/// separate, below). Returns nullptr for an invalid pair.
ReduceFn hostReduceFn(DataType type, RedOpKind op) noexcept;

/// dst[i] = src[i] * scalar (PreMulSum's per-rank factor; scalar is one element of `type`). dst may equal src.
void hostScale(void* dst, const void* src, size_t count, DataType type, const void* scalar) noexcept;

/// buf[i] = buf[i] / n (Avg; integers truncate toward zero, as NCCL does). n >= 1; n == 0 changes nothing.
void hostDivide(void* buf, size_t count, DataType type, uint64_t n) noexcept;

}  // namespace hetccl::device
