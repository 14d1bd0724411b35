// Element types and reduction operators. Numeric values of DataType and the built-in RedOpKind are
// NCCL's (ncclDataType_t, ncclRedOp_t), so the ABI shims can pass them through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hetccl {

enum class DataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
  Float8e4m3 = 10,  ///< OCP FP8 E4M3 (NCCL's ncclFloat8e4m3); reductions: src/device/base/fp8_format.hpp
  Float8e5m2 = 11,  ///< OCP FP8 E5M2 (NCCL's ncclFloat8e5m2)
};
inline constexpr int kNumDataTypes = 12;

/// Size in bytes of one element; 0 for a value outside the enum.
size_t dataTypeSize(DataType t) noexcept;
/// "int8", "float32", ... (nccl-tests' names); "unknown" outside the enum.
const char* dataTypeName(DataType t) noexcept;
/// Parses the names above and nccl-tests' aliases (int, float, half, double, bfloat16, ...).
std::optional<DataType> parseDataType(std::string_view name) noexcept;
bool isValidDataType(int t) noexcept;
bool isFloatingType(DataType t) noexcept;
/// Float8e4m3 or Float8e5m2.
bool isFp8Type(DataType t) noexcept;

enum class RedOpKind : int {
  Sum = 0,
  Prod = 1,
  Max = 2,
  Min = 3,
  Avg = 4,
  PreMulSum = 5,  ///< each rank's input is multiplied by its own scalar, then summed
};
inline constexpr int kNumBuiltinOps = 5;  // Sum..Avg, as ncclNumOps

/// A reduction as the engine sees it. For PreMulSum, `scalar` holds this rank's factor as one element of
/// the collective's data type (little-endian bytes, up to 8).
struct ReduceOp {
  RedOpKind kind = RedOpKind::Sum;
  alignas(8) unsigned char scalar[8] = {};
};

const char* redOpName(RedOpKind op) noexcept;  // "sum", "prod", "max", "min", "avg", "premulsum"
std::optional<RedOpKind> parseRedOp(std::string_view name) noexcept;

}  // namespace hetccl
