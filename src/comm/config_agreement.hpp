// Configuration variables that must be equal on every rank of a communicator, compared when it is
// created: the ones that shape what ranks send each other (chunk sizes, ring slots, the algorithm and
// its thresholds, the GPU executor, delegation to the vendor CCL, per-call checks, checksums). Ranks that
// disagree would plan different messages and hang or mix up data; instead every rank gets the same
// InvalidUsage naming each variable and both values.
#pragma once

#include <span>
#include <string_view>

#include "bootstrap/bootstrap.hpp"
#include "core/config.hpp"

namespace hetccl {

/// The variables compared, in order.
std::span<const std::string_view> variablesThatMustAgree();

/// Collective over `boot`: exchanges this rank's values (from `cfg`, normalised: 4M == 4194304, on == 1)
/// and throws InvalidUsage on every rank when any differs, naming the variable, two ranks and their values.
void checkConfigAgrees(bootstrap::Bootstrap& boot, const Config& cfg);

}  // namespace hetccl
