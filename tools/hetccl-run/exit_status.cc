#include "hetccl-run/exit_status.hpp"

#include <sys/wait.h>

#include <cstring>

#include "core/error.hpp"

namespace hetccl::run {

bool exitedCleanly(int waitStatus) { return WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0; }

std::string describeWaitStatus(int waitStatus) {
  if (WIFEXITED(waitStatus)) return concat("exited with status ", WEXITSTATUS(waitStatus));
  if (WIFSIGNALED(waitStatus)) {
    int sig = WTERMSIG(waitStatus);
    const char* name = strsignal(sig);
    return concat("killed by signal ", sig, " (", name ? name : "unknown", ")",
                  WCOREDUMP(waitStatus) ? ", core dumped" : "");
  }
  return concat("ended with wait status ", waitStatus);
}

int shellExitCode(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 1;
}

}  // namespace hetccl::run
