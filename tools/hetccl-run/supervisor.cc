#include "hetccl-run/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "hetccl-run/exit_status.hpp"
#include "hetccl-run/output_relay.hpp"
#include "hetccl-run/rank_process.hpp"

namespace hetccl::run {
namespace {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

constexpr auto kDrainAfterLastRank = std::chrono::seconds(2);  // output of stragglers outside the group
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

TimePoint after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void say(const std::string& line) { std::fprintf(stderr, "hetccl-run: %s\n", line.c_str()); }

class Supervisor {
 public:
  Supervisor(const std::vector<std::string>& command, const LaunchPlan& plan, const SupervisorSettings& settings)
      : command_(command), plan_(plan), settings_(settings) {}
  ~Supervisor();
  int run();

 private:
  void blockSignals();
  void startRanks();
  void abortStart();
  void handleSignals();
  void onInterrupt(int sig);
  void reapChildren();
  void onRankExit(RankProcess& rank, int waitStatus);
  void onTimers();
  void beginTermination();
  void signalRanks(int sig);
  void killLeftovers();
  int pollTimeoutMs() const;
  int runningCount() const;
  void printSummary() const;
  int exitCode() const;

  const std::vector<std::string>& command_;
  const LaunchPlan& plan_;
  const SupervisorSettings settings_;
  std::vector<RankProcess> ranks_;
  pid_t group_ = 0;
  int signalFd_ = -1;
  sigset_t originalMask_{};
  OutputRelay relay_;
  std::optional<int> firstFailure_;   ///< rank
  bool firstFailureFromTimeout_ = false;
  bool terminating_ = false;
  bool timedOut_ = false;
  int interruptSignal_ = 0;
  std::optional<TimePoint> terminateAt_, killAt_, timeoutAt_, drainUntil_;
};

Supervisor::~Supervisor() {
  if (signalFd_ >= 0) {
    ::close(signalFd_);
    sigprocmask(SIG_SETMASK, &originalMask_, nullptr);
  }
}

void Supervisor::blockSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int sig : kForwardedSignals) {
    struct sigaction current {};
    sigaction(sig, nullptr, &current);
    if (current.sa_handler != SIG_IGN) sigaddset(&set, sig);  // ignored (nohup, background job): stays so
  }
  if (sigprocmask(SIG_BLOCK, &set, &originalMask_) != 0) throw SystemError::fromErrno("sigprocmask", errno);
  signalFd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signalFd_ < 0) {
    int e = errno;
    sigprocmask(SIG_SETMASK, &originalMask_, nullptr);
    throw SystemError::fromErrno("signalfd", e);
  }
  signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the launcher; ranks get SIG_DFL back
}

void Supervisor::startRanks() {
  for (int r = 0; r < plan_.nranks; ++r) {
    SpawnRequest req;
    req.rank = r;
    req.command = &command_;
    req.variables = rankVariables(plan_, r);
    req.processGroup = group_;
    req.captureOutput = settings_.prefixOutput;
    req.childSignalMask = originalMask_;
    RankProcess rank = spawnRank(req);
    if (group_ == 0) group_ = rank.pid;
    if (rank.stdoutFd >= 0) relay_.add(r, rank.stdoutFd, STDOUT_FILENO);
    if (rank.stderrFd >= 0) relay_.add(r, rank.stderrFd, STDERR_FILENO);
    ranks_.push_back(rank);
  }
}

void Supervisor::abortStart() {
  signalRanks(SIGKILL);
  for (RankProcess& r : ranks_) waitpid(r.pid, nullptr, 0);
  ranks_.clear();
}

int Supervisor::runningCount() const {
  int n = 0;
  for (const RankProcess& r : ranks_) n += r.running ? 1 : 0;
  return n;
}

void Supervisor::signalRanks(int sig) {
  if (group_ > 0) kill(-group_, sig);  // the ranks and everything they started
  for (const RankProcess& r : ranks_)
    if (r.running) kill(r.pid, sig);   // also ranks that moved to a group of their own
}

void Supervisor::handleSignals() {
  signalfd_siginfo info;
  while (read(signalFd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (static_cast<int>(info.ssi_signo) == SIGCHLD) reapChildren();
    else onInterrupt(static_cast<int>(info.ssi_signo));
  }
}

void Supervisor::onInterrupt(int sig) {
  if (interruptSignal_ != 0) {  // asked twice: no more patience
    say(concat("got signal ", sig, " again; killing every rank"));
    signalRanks(SIGKILL);
    return;
  }
  say(concat("got signal ", sig, " (", strsignal(sig), "); forwarding it to the ranks"));
  interruptSignal_ = sig;
  terminating_ = true;
  signalRanks(sig);
  killAt_ = after(settings_.killDelaySeconds);
}

void Supervisor::reapChildren() {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (RankProcess& r : ranks_)
      if (r.pid == pid && r.running) onRankExit(r, status);
  }
}

void Supervisor::onRankExit(RankProcess& rank, int waitStatus) {
  rank.running = false;
  rank.waitStatus = waitStatus;
  if (exitedCleanly(waitStatus)) return;
  if (!firstFailure_) {
    firstFailure_ = rank.rank;
    firstFailureFromTimeout_ = timedOut_;
  }
  if (terminating_) return;  // expected: the summary tells
  say(concat("rank ", rank.rank, " (pid ", rank.pid, ") ", describeWaitStatus(waitStatus)));
  int others = runningCount();
  if (!terminateAt_ && others > 0) {
    terminateAt_ = after(settings_.graceSeconds);
    say(concat("terminating the other ranks (", others, " still running) in ", settings_.graceSeconds,
               " s unless they end first"));
  }
}

void Supervisor::beginTermination() {
  terminating_ = true;
  signalRanks(SIGTERM);
  killAt_ = after(settings_.killDelaySeconds);
}

void Supervisor::onTimers() {
  TimePoint now = Clock::now();
  int running = runningCount();
  if (running == 0) return;
  if (timeoutAt_ && !timedOut_ && now >= *timeoutAt_) {
    timedOut_ = true;
    say(concat("timeout of ", settings_.timeoutSeconds, " s reached; terminating ", running, " running ranks"));
    if (!terminating_) beginTermination();
  }
  if (terminateAt_ && !terminating_ && now >= *terminateAt_) {
    say(concat("grace period over; terminating ", running, " running ranks"));
    beginTermination();
  }
  if (killAt_ && now >= *killAt_) {
    say(concat(running, " ranks still running ", settings_.killDelaySeconds, " s after being told to stop; killing them"));
    signalRanks(SIGKILL);
    killAt_.reset();
  }
}

int Supervisor::pollTimeoutMs() const {
  std::optional<TimePoint> next;
  auto consider = [&](const std::optional<TimePoint>& t, bool active) {
    if (t && active && (!next || *t < *next)) next = t;
  };
  bool running = runningCount() > 0;
  consider(timeoutAt_, running && !timedOut_);
  consider(terminateAt_, running && !terminating_);
  consider(killAt_, running);
  consider(drainUntil_, true);
  if (!next) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60'000));
}

void Supervisor::killLeftovers() {
  if (group_ > 0) kill(-group_, SIGKILL);  // silent: the group may hold only exiting orphans
}

void Supervisor::printSummary() const {
  say(concat("exit status of the ", ranks_.size(), " ranks:"));
  for (const RankProcess& r : ranks_)
    std::fprintf(stderr, "  rank %d (pid %d): %s\n", r.rank, static_cast<int>(r.pid),
                 describeWaitStatus(r.waitStatus).c_str());
}

int Supervisor::exitCode() const {
  if (firstFailure_ && !firstFailureFromTimeout_) return shellExitCode(ranks_[*firstFailure_].waitStatus);
  if (timedOut_) return 124;
  if (firstFailure_) return shellExitCode(ranks_[*firstFailure_].waitStatus);
  return 0;
}

int Supervisor::run() {
  blockSignals();
  try {
    startRanks();
  } catch (const ExecError& e) {
    abortStart();
    say(e.what());
    return e.err() == ENOENT ? 127 : 126;
  } catch (...) {
    abortStart();
    throw;
  }
  if (settings_.timeoutSeconds > 0) timeoutAt_ = after(settings_.timeoutSeconds);
  while (runningCount() > 0 || relay_.anyOpen()) {
    if (runningCount() == 0 && !drainUntil_) {
      killLeftovers();
      drainUntil_ = Clock::now() + kDrainAfterLastRank;
    }
    if (drainUntil_ && Clock::now() >= *drainUntil_) break;
    std::vector<pollfd> fds{{signalFd_, POLLIN, 0}};
    for (int fd : relay_.openFds()) fds.push_back({fd, POLLIN, 0});
    int n = poll(fds.data(), fds.size(), pollTimeoutMs());
    if (n < 0 && errno != EINTR) throw SystemError::fromErrno("poll", errno);
    if (n > 0) {
      if (fds[0].revents) handleSignals();
      for (size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents) relay_.onReadable(fds[i].fd);
    }
    onTimers();
  }
  if (!drainUntil_) killLeftovers();
  relay_.closeAll();
  if (firstFailure_ || timedOut_) printSummary();
  return exitCode();
}

}  // namespace

int superviseJob(const std::vector<std::string>& command, const LaunchPlan& plan,
                 const SupervisorSettings& settings) {
  Supervisor supervisor(command, plan, settings);
  return supervisor.run();
}

}  // namespace hetccl::run
