#include "comm/config_agreement.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
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
using Value = std::array<char, kValueBytes>;

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

std::string text(const Value& value) {
  return std::string(value.data(), strnlen(value.data(), value.size()));
}

// A value as compared: whole up to kValueBytes - 1 characters, else its first 27 and a hash of the whole.
std::string comparable(const std::string& v) {
  if (v.size() < kValueBytes) return v;
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : v) h = (h ^ c) * 1099511628211ULL;
  char hash[24];
  std::snprintf(hash, sizeof hash, "...#%016llx", static_cast<unsigned long long>(h));
  return v.substr(0, kValueBytes - 1 - 20) + hash;  // 20: "...#" and 16 digits
}

}  // namespace

std::span<const std::string_view> variablesThatMustAgree() { return kNames; }

void checkConfigAgrees(bootstrap::Bootstrap& boot, const Config& cfg, std::span<const DerivedValue> derived) {
  const int n = boot.size(), self = boot.rank();
  const size_t count = kVariables.size() + derived.size();
  std::vector<Value> all(static_cast<size_t>(n) * count);
  auto put = [&](size_t i, const std::string& v) {
    Value& slot = all[static_cast<size_t>(self) * count + i];
    slot.fill('\0');
    std::memcpy(slot.data(), v.data(), std::min(v.size(), kValueBytes - 1));
  };
  for (size_t i = 0; i < kVariables.size(); ++i) put(i, normalised(cfg, kVariables[i]));
  for (size_t i = 0; i < derived.size(); ++i) put(kVariables.size() + i, comparable(derived[i].value));
  boot.allGather(all.data(), count * sizeof(Value));
  auto at = [&](int r, size_t i) -> const Value& { return all[static_cast<size_t>(r) * count + i]; };
  std::string problems;
  for (size_t i = 0; i < count; ++i)
    for (int r = 1; r < n; ++r)
      if (at(r, i) != at(0, i)) {
        const std::string_view name = i < kVariables.size() ? kVariables[i].name : derived[i - kVariables.size()].name;
        problems += concat(problems.empty() ? "" : "; ", name, " differs between ranks: rank 0 has '", text(at(0, i)),
                           "', rank ", r, " has '", text(at(r, i)), "'");
        break;
      }
  const DerivedValue* failed = nullptr;
  for (const DerivedValue& d : derived)
    if (!failed && !d.error.empty()) failed = &d;
  if (problems.empty() && !failed) return;
  // Every rank fails alike here, but a rank that fails at once closes its bootstrap connections while a
  // slower rank may still be gathering the values, which then fails naming a dead peer instead of the
  // setting (3 ranks under ASan: mp_tuning_file). One more exchange keeps every rank until all have the
  // values; a peer that leaves during it changes nothing here.
  try {
    std::vector<char> arrived(static_cast<size_t>(n));
    boot.allGather(arrived.data(), 1);
  } catch (const PeerError&) {
  }
  if (!problems.empty())
    throw InvalidUsage(concat(problems, " (these variables shape what ranks send each other: set them alike on "
                                        "every rank, or leave them unset)"));
  throw InvalidArgument(failed->error);
}

}  // namespace hetccl
