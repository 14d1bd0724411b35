// fault_fork_child: a rank that forked a live child dies; its peer must name it at once (issue 27 item 5).
//
// Two ranks (launch environment, e.g. hetccl-run or the driver fork_child.sh). Both initialise and run
// one all-reduce. Rank 1 then forks: the child calls hetcclAllReduce on the inherited communicator,
// which must fail with hetcclInvalidUsage saying it was forked (before the fix it ran on the parent's
// connections), prints "CHILD <pid> <code> <message>" and stays alive (a DataLoader worker) holding its
// inherited descriptors; the parent prints "FORKED <pid>", waits (10 s at most) for the child's report (a
// child that hangs in the inherited communicator never reports: the driver fails the run for the missing
// CHILD line), then prints "T kill <unix seconds>" and SIGKILLs itself. Rank 0 sits in
// an all-reduce and prints "ERROR <unix seconds> <code> <message>" when it fails.
// Exit status: rank 0 3 after the error; the child 0 after its sleep (the driver kills it sooner).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

hetcclResult_t allReduce(hetcclComm_t comm) {
  std::vector<int32_t> in(1024, 1), out(1024, 0);
  return hetcclAllReduce(in.data(), out.data(), in.size(), hetcclInt32, hetcclSum, comm, nullptr);
}

std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

int main() {
  auto env = hetccl::tools::readLaunchEnv();
  hetcclComm_t comm = nullptr;
  hetcclResult_t r = hetcclCommInitRank(&comm, env.size, env.id, env.rank);
  if (r == hetcclSuccess) r = allReduce(comm);
  if (r != hetcclSuccess) {
    std::printf("SETUP %d %s\n", static_cast<int>(r), oneLine(hetcclGetLastError(comm)).c_str());
    return 1;
  }
  std::fflush(stdout);
  if (env.rank == 0) {
    r = allReduce(comm);  // rank 1 never joins it: it dies
    std::printf("ERROR %.6f %d %s\n", now(), static_cast<int>(r), oneLine(hetcclGetLastError(comm)).c_str());
    std::fflush(stdout);
    hetcclCommAbort(comm);
    return r == hetcclSuccess ? 1 : 3;
  }
  int reported[2];
  if (pipe(reported) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(reported[0]);
    r = allReduce(comm);
    std::printf("CHILD %d %d %s\n", static_cast<int>(getpid()), static_cast<int>(r), oneLine(hetcclGetLastError(nullptr)).c_str());
    std::fflush(stdout);
    (void)!write(reported[1], "x", 1);
    std::this_thread::sleep_for(std::chrono::seconds(120));  // alive, holding what it inherited
    _exit(0);
  }
  close(reported[1]);
  std::printf("FORKED %d\n", static_cast<int>(child));
  std::fflush(stdout);
  pollfd done{reported[0], POLLIN, 0};
  (void)poll(&done, 1, 10000);  // the child made its call (or hung in it: no CHILD line)
  std::printf("T kill %.6f\n", now());
  std::fflush(stdout);
  kill(getpid(), SIGKILL);
  return 1;
}
