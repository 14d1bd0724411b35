// Host reduction kernels of the 16-bit float types for x86-64 CPUs with AVX2 and F16C (every x86-64 CPU
// since 2013): float16 converted by the F16C instructions, bfloat16 by the portable code's integer
// conversions done in AVX2 lanes, the arithmetic in float either way. Bit for bit the portable kernels' results
// (reduce.cc): F16C converts exactly and rounds to nearest even, quiets NaNs keeping sign and top
// payload bits, and no float result of two 16-bit operands is subnormal, so MXCSR's DAZ/FTZ cannot
// matter. The portable float16 kernel ran at about 1 GB/s on the H100 machine's CPU, a fifth of float's
// speed, and capped half-precision all-reduces between hosts there (bench/results/host_f16_reduce_2026-11-25).
#pragma once

#include "device/host/reduce.hpp"

namespace hetccl::device {

/// The fast kernel of (type, op) for Float16 / Bfloat16 when this CPU has AVX2 and F16C (checked once),
/// else nullptr (also for every other type, and on other architectures). `op` as in hostReduceFn.
ReduceFn x86SixteenBitReduceFn(DataType type, RedOpKind op) noexcept;

/// The portable kernel of (type, op), whatever the CPU has (for tests comparing the two).
ReduceFn portableHostReduceFn(DataType type, RedOpKind op) noexcept;

}  // namespace hetccl::device
