// Wording and exit codes of a child's wait status (the int filled by waitpid).
#pragma once

#include <string>

namespace hetccl::run {

/// True when the process exited normally with status 0.
bool exitedCleanly(int waitStatus);

/// "exited with status 3", "exited with status 0" or "killed by signal 9 (Killed)".
std::string describeWaitStatus(int waitStatus);

/// The shell's convention: the exit status, or 128 + signal number when killed by a signal.
int shellExitCode(int waitStatus);

}  // namespace hetccl::run
