#include "core/types.hpp"

#include <array>
#include <utility>

namespace hetccl {
namespace {

struct TypeInfo {
  DataType type;
  size_t size;
  const char* name;
};
constexpr std::array<TypeInfo, kNumDataTypes> kTypes{{
    {DataType::Int8, 1, "int8"},
    {DataType::Uint8, 1, "uint8"},
    {DataType::Int32, 4, "int32"},
    {DataType::Uint32, 4, "uint32"},
    {DataType::Int64, 8, "int64"},
    {DataType::Uint64, 8, "uint64"},
    {DataType::Float16, 2, "float16"},
    {DataType::Float32, 4, "float32"},
    {DataType::Float64, 8, "float64"},
    {DataType::Bfloat16, 2, "bfloat16"},
    {DataType::Float8e4m3, 1, "f8e4m3"},
    {DataType::Float8e5m2, 1, "f8e5m2"},
}};

constexpr std::array<std::pair<std::string_view, DataType>, 10> kTypeAliases{{
    {"char", DataType::Int8},
    {"int", DataType::Int32},
    {"half", DataType::Float16},
    {"float", DataType::Float32},
    {"double", DataType::Float64},
    {"bf16", DataType::Bfloat16},
    {"fp16", DataType::Float16},
    {"fp32", DataType::Float32},
    {"float8e4m3", DataType::Float8e4m3},
    {"float8e5m2", DataType::Float8e5m2},
}};

constexpr std::array<const char*, 6> kOpNames{"sum", "prod", "max", "min", "avg", "premulsum"};

}  // namespace

bool isValidDataType(int t) noexcept { return t >= 0 && t < kNumDataTypes; }

size_t dataTypeSize(DataType t) noexcept {
  return isValidDataType(static_cast<int>(t)) ? kTypes[static_cast<int>(t)].size : 0;
}

const char* dataTypeName(DataType t) noexcept {
  return isValidDataType(static_cast<int>(t)) ? kTypes[static_cast<int>(t)].name : "unknown";
}

std::optional<DataType> parseDataType(std::string_view name) noexcept {
  for (const auto& t : kTypes)
    if (name == t.name) return t.type;
  for (const auto& [alias, type] : kTypeAliases)
    if (name == alias) return type;
  return std::nullopt;
}

bool isFloatingType(DataType t) noexcept {
  return t == DataType::Float16 || t == DataType::Float32 || t == DataType::Float64 || t == DataType::Bfloat16 ||
         isFp8Type(t);
}

bool isFp8Type(DataType t) noexcept { return t == DataType::Float8e4m3 || t == DataType::Float8e5m2; }

const char* redOpName(RedOpKind op) noexcept {
  auto i = static_cast<size_t>(op);
  return i < kOpNames.size() ? kOpNames[i] : "unknown";
}

std::optional<RedOpKind> parseRedOp(std::string_view name) noexcept {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (name == kOpNames[i]) return static_cast<RedOpKind>(i);
  return std::nullopt;
}

}  // namespace hetccl
