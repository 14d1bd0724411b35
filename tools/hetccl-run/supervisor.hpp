// Runs the ranks of a local job to the end: starts them in one process group, relays output,
// forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT (those not ignored when it started; ranks inherit ignored ones),
// and makes sure nothing is left running:
//   - a rank that exits non-zero or by a signal is reported at once ("rank 2 (pid 1234) killed by
//     signal 9 (Killed)"); after the grace period the remaining ranks get SIGTERM, then SIGKILL;
//   - at the timeout every rank gets SIGTERM, then SIGKILL;
//   - processes the ranks leave behind in their process group are killed when the last rank ended.
#pragma once

#include <string>
#include <vector>

#include "hetccl-run/launch_plan.hpp"

namespace hetccl::run {

struct SupervisorSettings {
  double graceSeconds = 30;      ///< after the first failure, before SIGTERM to the rest
  double timeoutSeconds = 0;     ///< whole job; 0 = no limit
  double killDelaySeconds = 5;   ///< between SIGTERM and SIGKILL
  bool prefixOutput = false;     ///< relay output as "[rank] line" instead of letting ranks inherit it
};

/// Starts every rank of `plan` running `command` and supervises them until all have ended. Prints a
/// summary of every rank's exit status when any failed. Returns hetccl-run's exit status: 0 when all
/// ranks succeeded; else the first failing rank's status (128 + signal when killed by a signal);
/// 124 when the timeout ended the job; 127 (126) when the command could not be found (executed).
/// Must be called from the main thread of a single-threaded process (it blocks signals).
int superviseJob(const std::vector<std::string>& command, const LaunchPlan& plan,
                 const SupervisorSettings& settings);

}  // namespace hetccl::run
