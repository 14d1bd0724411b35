// Configuration variables that must be equal on every rank of a communicator, compared when it is
// created: the ones that shape what ranks send each other (chunk sizes, ring slots, the algorithm and
// its thresholds, the GPU executor, delegation to the vendor CCL, per-call checks, checksums). Ranks that
// disagree would plan different messages and hang or mix up data; instead every rank gets the same
// InvalidUsage naming each variable and both values.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "bootstrap/bootstrap.hpp"
#include "core/config.hpp"

namespace hetccl {

/// The variables compared, in order.
std::span<const std::string_view> variablesThatMustAgree();

/// A value derived from the configuration that must agree too, e.g. {"HETCCL_TUNING_FILE rows", "rd<=65536
/// ring"}; values longer than 47 characters are compared by their first 27 and a hash of the whole.
struct DerivedValue {
  std::string_view name;
  std::string value;
  /// Why the value could not be derived (e.g. an unreadable file; `value` then says so alike on every rank
  /// that has the problem): thrown as InvalidArgument once every rank has the values.
  std::string error;
};

/// Collective over `boot`: exchanges this rank's values (from `cfg`, normalised: 4M == 4194304, on == 1,
/// then `derived` in order; every rank must pass the same names) and throws InvalidUsage on every rank
/// when any differs, naming the variable, two ranks and their values; else InvalidArgument with the first
/// derived value's error, if any. Either way only after every rank has the values (no rank that fails
/// leaves a slower one to fail naming it as a dead peer instead).
void checkConfigAgrees(bootstrap::Bootstrap& boot, const Config& cfg, std::span<const DerivedValue> derived = {});

}  // namespace hetccl
