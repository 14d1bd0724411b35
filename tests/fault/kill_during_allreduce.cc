// fault_kill: ranks all-reduce 64 MB in a loop; the last rank SIGKILLs itself in the middle of one.
// Every survivor must get hetcclRemoteError naming the dead rank within 10 s of its death, then exit
// cleanly. Prints "fault_kill: rank R: OK ..." on success. Started by kill_during_allreduce.sh.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fault_kill STAMP_FILE\n");
    return 2;
  }
  const std::string stampFile = argv[1];
  auto env = hetccl::tools::readLaunchEnv();
  const int victim = env.size - 1;
  hetcclComm_t comm;
  if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess) {
    std::fprintf(stderr, "fault_kill: rank %d: init failed: %s\n", env.rank, hetcclGetLastError(nullptr));
    return 1;
  }
  const size_t count = 16u << 20;  // 64 MB of float32
  std::vector<float> buf(count, 1.0f);
  for (int iter = 0;; ++iter) {
    if (env.rank == victim && iter == 2) {
      std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));  // inside the next all-reduce
        std::ofstream(stampFile) << std::to_string(nowSeconds()) << "\n";
        ::kill(::getpid(), SIGKILL);
      }).detach();
    }
    hetcclResult_t r = hetcclAllReduce(buf.data(), buf.data(), count, hetcclFloat32, hetcclSum, comm, nullptr);
    if (r == hetcclSuccess) {
      if (iter > 1000) break;
      continue;
    }
    const double failedAt = nowSeconds();
    std::string msg = hetcclGetLastError(comm);
    double killedAt = 0;
    std::ifstream(stampFile) >> killedAt;
    const double delay = failedAt - killedAt;
    const std::string needle = "rank " + std::to_string(victim);
    bool ok = r == hetcclRemoteError && msg.find(needle) != std::string::npos && killedAt > 0 && delay <= 10.0;
    hetcclResult_t async = hetcclSuccess;
    hetcclCommGetAsyncError(comm, &async);
    ok = ok && async != hetcclSuccess;
    std::printf("fault_kill: rank %d: %s: code %d after %.3f s: %s\n", env.rank, ok ? "OK" : "FAIL", r, delay,
                msg.c_str());
    std::fflush(stdout);
    hetcclCommAbort(comm);
    return ok ? 0 : 1;
  }
  std::printf("fault_kill: rank %d: FAIL: no error after 1000 iterations\n", env.rank);
  return 1;
}
