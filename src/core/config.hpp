// The one registry of every configuration variable hetccl reads. Variables are declared in config.cc
// (name, NCCL_* alias where the meaning is the same, default, meaning), read from the environment once,
// and printed by hetccl-info. Nothing else in hetccl calls getenv for its own settings.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hetccl {

struct ConfigVar {
  std::string_view name;          ///< HETCCL_* name
  std::string_view ncclAlias;     ///< NCCL_* name honoured when the HETCCL_* one is unset ("" if none)
  std::string_view defaultValue;  ///< used when neither is set
  std::string_view help;          ///< one line: what it does, unit, accepted values
};

class Config {
 public:
  /// Every declared variable, in a fixed order.
  static std::span<const ConfigVar> variables();

  /// Value of a declared variable: the environment's (HETCCL_* first, then the NCCL_* alias) or the
  /// default. Throws InternalError for an undeclared name (a bug).
  std::string str(std::string_view name) const;
  /// True when the variable (or its alias) was set in the environment.
  bool isSet(std::string_view name) const;
  /// Integer value; accepts K/M/G suffixes (powers of 1024). Throws InvalidArgument naming the variable
  /// when the value is not a number or lies outside [lo, hi].
  int64_t integer(std::string_view name, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) const;
  /// Boolean value: 1/0, true/false, yes/no, on/off. Throws InvalidArgument otherwise.
  bool boolean(std::string_view name) const;
  /// Checks every size variable that is set against its sane range (as integer() would when it is read);
  /// throws InvalidArgument for the first one outside. Init calls it before contacting any peer.
  void checkSizes() const;
  /// Checks every variable that is set and has a fixed form: the sizes (checkSizes), the variables with a
  /// fixed set of values (HETCCL_GPU_EXEC, HETCCL_DEBUG in any case, ...), the booleans and the timeout;
  /// throws InvalidArgument naming the variable and the accepted values. Init calls it before contacting
  /// any peer, whether or not this communicator's path would read the variable.
  void checkValues() const;
  /// HETCCL_* names in the environment that nothing reads (misspellings), each with the nearest declared
  /// name when one is close: "HETCCL_TIMEOUTT (did you mean HETCCL_TIMEOUT?)". Sorted.
  static std::vector<std::string> unknownVariables();
  /// Logs a warning for each unknown variable, once per process (init calls it).
  static void warnUnknownVariablesOnce();

  /// HETCCL_TIMEOUT in milliseconds (the variable is in seconds, fractions allowed).
  int64_t timeoutMs() const;

  /// Snapshot of the current environment. Normal code uses config(); tests that change the environment
  /// call reloadConfig().
  static Config fromEnvironment();

 private:
  struct Entry {
    std::string value;
    bool set = false;
  };
  const Entry& entry(std::string_view name) const;
  Entry entries_[64];
  size_t count_ = 0;
};

/// The process-wide configuration, read on first use.
const Config& config();
/// Re-reads the environment (tests only; not safe while other threads read the configuration).
void reloadConfig();

}  // namespace hetccl
