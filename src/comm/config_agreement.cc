#include "comm/config_agreement.hpp"

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hetccl {
namespace {

enum class Kind { Integer, Boolean, Text };

struct Variable {
  std::string_view name;
  Kind kind;
};

constexpr std::array kVariables = {
    Variable{"HETCCL_GPU_EXEC", Kind::Text},
    Variable{"HETCCL_GPU_CHUNK_BYTES", Kind::Integer},
    Variable{"HETCCL_HIER_CHUNK_BYTES", Kind::Integer},
    Variable{"HETCCL_HIER_NET_MIN_CHUNK_BYTES", Kind::Integer},
    Variable{"HETCCL_GPU_MIN_CHUNK_BYTES", Kind::Integer},
    Variable{"HETCCL_GPU_PAIR_EXCHANGE_BYTES", Kind::Integer},
    Variable{"HETCCL_GPU_LL_BYTES", Kind::Integer},
    Variable{"HETCCL_GPU_SLOTS", Kind::Integer},
    Variable{"HETCCL_STAGED_PIECE_BYTES", Kind::Integer},
    Variable{"HETCCL_ALGO", Kind::Text},
    Variable{"HETCCL_SMALL_BYTES", Kind::Integer},
    Variable{"HETCCL_CHUNK_BYTES", Kind::Integer},
    Variable{"HETCCL_VENDOR_CCL", Kind::Text},
    Variable{"HETCCL_CHECK_CALLS", Kind::Boolean},
    Variable{"HETCCL_CHECKSUM", Kind::Boolean},
};
constexpr std::array<std::string_view, kVariables.size()> kNames = [] {
  std::array<std::string_view, kVariables.size()> names{};
  for (size_t i = 0; i < kVariables.size(); ++i) names[i] = kVariables[i].name;
  return names;
}();

constexpr size_t kValueBytes = 48;  // per variable on the wire, NUL-padded (longer values are cut)
using Values = std::array<std::array<char, kValueBytes>, kVariables.size()>;

/// The value compared: integers and booleans normalised; a value that does not parse stays as written
/// (it fails later on its own rank, with the parser's message).
std::string normalised(const Config& cfg, const Variable& v) {
  try {
    switch (v.kind) {
      case Kind::Integer: return std::to_string(cfg.integer(v.name));
      case Kind::Boolean: return cfg.boolean(v.name) ? "1" : "0";
      case Kind::Text: break;
    }
  } catch (const InvalidArgument&) {
  }
  return cfg.str(v.name);
}

std::string text(const std::array<char, kValueBytes>& value) {
  return std::string(value.data(), strnlen(value.data(), value.size()));
}

}  // namespace

std::span<const std::string_view> variablesThatMustAgree() { return kNames; }

void checkConfigAgrees(bootstrap::Bootstrap& boot, const Config& cfg) {
  const int n = boot.size(), self = boot.rank();
  std::vector<Values> all(static_cast<size_t>(n));
  for (size_t i = 0; i < kVariables.size(); ++i) {
    const std::string v = normalised(cfg, kVariables[i]);
    all[self][i].fill('\0');
    std::memcpy(all[self][i].data(), v.data(), std::min(v.size(), kValueBytes - 1));
  }
  boot.allGather(all.data(), sizeof(Values));
  std::string problems;
  for (size_t i = 0; i < kVariables.size(); ++i)
    for (int r = 1; r < n; ++r)
      if (all[r][i] != all[0][i]) {
        problems += concat(problems.empty() ? "" : "; ", kVariables[i].name, " differs between ranks: rank 0 has '",
                           text(all[0][i]), "', rank ", r, " has '", text(all[r][i]), "'");
        break;
      }
  if (!problems.empty())
    throw InvalidUsage(concat(problems, " (these variables shape what ranks send each other: set them alike on every "
                                        "rank, or leave them unset)"));
}

}  // namespace hetccl
