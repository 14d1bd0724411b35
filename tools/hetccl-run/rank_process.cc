#include "hetccl-run/rank_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hetccl::run {
namespace {

struct Pipe {
  int read = -1, write = -1;
};

Pipe makePipe(const char* what) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw SystemError::fromErrno(concat("pipe for ", what), errno);
  return {fds[0], fds[1]};
}

void closeIfOpen(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Runs in the child: never returns. Reports a failed exec's errno through `errorPipe`.
[[noreturn]] void becomeRank(const SpawnRequest& req, pid_t launcher, const Pipe& out, const Pipe& err,
                             int errorPipe, const std::vector<char*>& argv) {
  setpgid(0, req.processGroup);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(127);  // the launcher died before prctl took effect
  int devNull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devNull >= 0) dup2(devNull, STDIN_FILENO);
  if (out.write >= 0) dup2(out.write, STDOUT_FILENO);
  if (err.write >= 0) dup2(err.write, STDERR_FILENO);
  for (const auto& [name, value] : req.variables) setenv(name.c_str(), value.c_str(), 1);
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &req.childSignalMask, nullptr);
  execvp(argv[0], argv.data());
  int e = errno;
  (void)!write(errorPipe, &e, sizeof e);
  _exit(127);
}

}  // namespace

RankProcess spawnRank(const SpawnRequest& req) {
  std::vector<char*> argv;
  for (const std::string& a : *req.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  Pipe out, err;
  if (req.captureOutput) {
    out = makePipe("a rank's stdout");
    err = makePipe("a rank's stderr");
  }
  Pipe execStatus = makePipe("exec status");
  pid_t launcher = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int* fd : {&out.read, &out.write, &err.read, &err.write, &execStatus.read, &execStatus.write}) closeIfOpen(*fd);
    throw SystemError::fromErrno(concat("fork for rank ", req.rank), e);
  }
  if (pid == 0) becomeRank(req, launcher, out, err, execStatus.write, argv);

  setpgid(pid, req.processGroup == 0 ? pid : req.processGroup);  // also here: no race with the child
  closeIfOpen(out.write);
  closeIfOpen(err.write);
  closeIfOpen(execStatus.write);
  int execErrno = 0;
  ssize_t n;
  do {
    n = read(execStatus.read, &execErrno, sizeof execErrno);  // EOF (0) once exec succeeded
  } while (n < 0 && errno == EINTR);
  closeIfOpen(execStatus.read);
  if (n == sizeof execErrno) {
    waitpid(pid, nullptr, 0);
    closeIfOpen(out.read);
    closeIfOpen(err.read);
    throw ExecError(concat("cannot execute '", (*req.command)[0], "' for rank ", req.rank, ": ", strerror(execErrno)),
                    execErrno);
  }
  RankProcess rank;
  rank.rank = req.rank;
  rank.pid = pid;
  rank.stdoutFd = out.read;
  rank.stderrFd = err.read;
  return rank;
}

}  // namespace hetccl::run
