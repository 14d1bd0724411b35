#include "transport/shm/process_liveness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace hetccl::transport::shm {
namespace {

int openPidfd(int32_t pid) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#endif
  return -1;  // old kernel (ENOSYS) or process already gone (ESRCH): fall back to kill/proc
}

/// State letter from /proc/<pid>/stat ("pid (comm) S ..."); '?' when unreadable.
char procState(int32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return '?';
  size_t close = line.rfind(')');  // comm may contain spaces and parentheses
  if (close == std::string::npos || close + 2 >= line.size()) return '?';
  return line[close + 2];
}

}  // namespace

ProcessLiveness::ProcessLiveness(int32_t pid) : pid_(pid) {
  if (pid_ > 0 && pid_ != ::getpid()) pidfd_ = openPidfd(pid_);
}

ProcessLiveness::~ProcessLiveness() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool ProcessLiveness::alive() const {
  if (pid_ <= 0 || pid_ == ::getpid()) return true;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    int rc = ::poll(&p, 1, 0);
    if (rc > 0) return false;  // readable pidfd: the process has exited
    if (rc == 0) return true;
  }
  if (::kill(pid_, 0) != 0 && errno == ESRCH) return false;
  char state = procState(pid_);
  return state != 'Z' && state != 'X';
}

void PeerWatch::throwIfDead(const char* what) {
  auto now = Clock::now();
  if (now < nextCheck_) return;
  nextCheck_ = now + std::chrono::milliseconds(periodMs_);
  if (!liveness_.alive())
    throw PeerError(peer_.rank, peer_.hostId,
                    concat(what, ": peer rank ", peer_.rank, " on host '", peer_.hostId, "' (pid ", peer_.pid,
                           ") has died"));
}

}  // namespace hetccl::transport::shm
