#include "common/env_reader.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace hetccl::tools {
namespace {

bool declaredInRegistry(std::string_view name) {
  for (const ConfigVar& v : Config::variables())
    if (v.name == name) return true;
  return false;
}

constexpr long long kStopBeforeOverflow = 100'000'000'000'000'000LL;  // 1e17: *10 + 9 still fits

}  // namespace

long long parseDecimal(std::string_view what, std::string_view text, long long lo, long long hi) {
  if (text.empty()) throw InvalidArgument(concat(what, " is empty; expected a decimal integer"));
  size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) throw InvalidArgument(concat(what, "='", text, "' is not a decimal integer"));
  long long value = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') throw InvalidArgument(concat(what, "='", text, "' is not a decimal integer"));
    if (value > kStopBeforeOverflow)  // beyond any value a launcher passes: stop before overflowing
      throw InvalidArgument(concat(what, "='", text, "' is outside [", lo, ", ", hi, "]"));
    value = value * 10 + (c - '0');
  }
  if (text[0] == '-') value = -value;
  if (value < lo || value > hi)
    throw InvalidArgument(concat(what, "='", text, "' is outside [", lo, ", ", hi, "]"));
  return value;
}

EnvReader::EnvReader() : config_(Config::fromEnvironment()) {}

std::optional<std::string> EnvReader::get(std::string_view name) const {
  if (declaredInRegistry(name)) {
    if (!config_.isSet(name)) return std::nullopt;
    return config_.str(name);
  }
  const char* v = std::getenv(std::string(name).c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

std::string EnvReader::require(std::string_view name, std::string_view hint) const {
  std::optional<std::string> v = get(name);
  if (!v) throw InvalidArgument(concat(name, " is not set (", hint, ")"));
  if (v->empty()) throw InvalidArgument(concat(name, " is set but empty (", hint, ")"));
  return *v;
}

long long EnvReader::integer(std::string_view name, long long lo, long long hi, std::string_view hint) const {
  return parseDecimal(name, require(name, hint), lo, hi);
}

}  // namespace hetccl::tools
