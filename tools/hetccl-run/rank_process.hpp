// Starting one rank: fork + exec of the command with the rank's variables, in the job's process group.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "hetccl-run/launch_plan.hpp"

namespace hetccl::run {

/// exec of the command failed in the child (the command is missing or not executable).
class ExecError : public SystemError {
 public:
  ExecError(const std::string& what, int err) : SystemError(what), err_(err) {}
  int err() const noexcept { return err_; }  ///< errno of the failed exec

 private:
  int err_;
};

struct SpawnRequest {
  int rank = 0;
  const std::vector<std::string>* command = nullptr;  ///< CMD ARGS..., searched in PATH
  std::vector<EnvAssignment> variables;              ///< set in the child before exec
  pid_t processGroup = 0;      ///< join this group; 0 = start a new group led by the child
  bool captureOutput = false;  ///< stdout/stderr go to pipes returned in RankProcess
  sigset_t childSignalMask;    ///< the mask to restore in the child (the launcher's original one)
};

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  int stdoutFd = -1;  ///< read end of the child's stdout pipe (captureOutput), else -1
  int stderrFd = -1;
  bool running = true;
  int waitStatus = 0;  ///< valid once !running
};

/// Starts the rank. The child gets stdin from /dev/null (ranks run in a background process group),
/// the default SIGPIPE action, and SIGKILL when the launcher dies (PR_SET_PDEATHSIG); the caller must
/// call this from the thread that stays alive. Returns once exec succeeded. Throws ExecError when exec
/// failed (the child has been reaped), SystemError when fork or pipe failed.
RankProcess spawnRank(const SpawnRequest& request);

}  // namespace hetccl::run
