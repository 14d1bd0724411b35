// Reading launch variables from the environment with messages that say which variable is wrong and
// what was expected. HETCCL_* variables come from the configuration registry (src/core/config.cc,
// snapshot taken when the reader is built); other launchers' variables (RANK, SLURM_*, ...) are read
// directly, as they are not hetccl settings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/config.hpp"

namespace hetccl::tools {

/// Parses a decimal integer strictly: an optional '-', then digits only (no spaces, signs, suffixes
/// or hex), within [lo, hi]. `what` names the value in the message. Throws InvalidArgument.
long long parseDecimal(std::string_view what, std::string_view text, long long lo, long long hi);

class EnvReader {
 public:
  /// Takes a snapshot of the HETCCL_* registry; other variables are read at each call.
  EnvReader();

  /// The variable's value, or nullopt when it is unset. An empty value counts as set.
  std::optional<std::string> get(std::string_view name) const;
  /// True when get(name) has a value.
  bool has(std::string_view name) const { return get(name).has_value(); }
  /// The value of a variable that must be set and non-empty; otherwise throws InvalidArgument
  /// "<name> is not set (<hint>)".
  std::string require(std::string_view name, std::string_view hint) const;
  /// require() parsed with parseDecimal(name, value, lo, hi).
  long long integer(std::string_view name, long long lo, long long hi, std::string_view hint) const;

 private:
  Config config_;
};

}  // namespace hetccl::tools
