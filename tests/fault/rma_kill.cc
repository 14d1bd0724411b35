// fault_rma_kill: rank 0 puts 32 MiB to the last rank in a loop (and waits for notifications from it in
// a second thread); the last rank SIGKILLs itself in the middle. Rank 0's put request must fail with
// hetcclRemoteError naming the dead rank and its host within 10 s of the death (never a hang), and so
// must its NotifyWait. Other ranks, with nothing in flight, see their NotifyWait on it end naming it. Prints "fault_rma_kill: rank R: OK ..." on success. Started by
// rma_kill.sh.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"
#include "hetccl/hetccl_rma.h"

namespace {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int fail(int rank, const char* what) {
  std::printf("fault_rma_kill: rank %d: FAIL: %s: %s\n", rank, what, hetcclGetLastError(nullptr));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fault_rma_kill STAMP_FILE\n");
    return 2;
  }
  const std::string stampFile = argv[1];
  auto env = hetccl::tools::readLaunchEnv();
  const int victim = env.size - 1;
  hetcclComm_t comm;
  if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess) return fail(env.rank, "init");
  if (hetcclRmaInit(comm) != hetcclSuccess) return fail(env.rank, "hetcclRmaInit");
  const size_t bytes = 32u << 20;
  std::vector<unsigned char> buf(bytes, static_cast<unsigned char>(env.rank));
  hetcclMem_t mem;
  if (hetcclMemRegister(comm, buf.data(), bytes, &mem) != hetcclSuccess) return fail(env.rank, "register");
  // Descriptors travel through the application's own channel: here an all-gather of their bytes.
  std::vector<hetcclMemDesc_t> descs(env.size);
  if (hetcclMemExport(mem, &descs[env.rank]) != hetcclSuccess) return fail(env.rank, "export");
  if (hetcclAllGather(&descs[env.rank], descs.data(), HETCCL_MEM_DESC_BYTES, hetcclUint8, comm, nullptr) != hetcclSuccess)
    return fail(env.rank, "all-gather of descriptors");

  if (env.rank == victim) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 0's puts are flowing by now
    std::ofstream(stampFile) << std::to_string(nowSeconds()) << "\n";
    ::kill(::getpid(), SIGKILL);
  }
  if (env.rank != 0) {  // bystanders, with nothing in flight: a NotifyWait on the victim ends naming it
    const hetcclResult_t r = hetcclNotifyWait(comm, victim, 1, -1);
    const std::string msg = hetcclGetLastError(nullptr);
    const bool ok = r == hetcclRemoteError && msg.find("rank " + std::to_string(victim) + " (host ") != std::string::npos;
    std::printf("fault_rma_kill: rank %d: %s: notify wait: code %d: %s\n", env.rank, ok ? "OK" : "FAIL", r, msg.c_str());
    std::fflush(stdout);
    hetcclCommAbort(comm);
    return ok ? 0 : 1;
  }
  hetcclRemoteMem_t remote;
  if (hetcclMemImport(comm, &descs[victim], &remote) != hetcclSuccess) return fail(env.rank, "import");
  // A second thread waits for a notification that never comes: it must end too, naming the rank.
  std::string waitMsg;
  hetcclResult_t waitRc = hetcclSuccess;
  std::thread waiter([&] {
    waitRc = hetcclNotifyWait(comm, victim, 1, -1);
    waitMsg = hetcclGetLastError(nullptr);
  });
  const std::string needle = "rank " + std::to_string(victim) + " (host ";
  for (int iter = 0; iter < 100000; ++iter) {
    hetcclRequest_t req;
    hetcclResult_t r = hetcclPut(mem, 0, remote, 0, bytes, &req);
    if (r == hetcclSuccess) {
      r = hetcclRequestWait(req);
      hetcclRequestFree(req);
    }
    if (r == hetcclSuccess) continue;
    const double failedAt = nowSeconds();
    const std::string msg = hetcclGetLastError(nullptr);
    double killedAt = 0;
    std::ifstream(stampFile) >> killedAt;
    const double delay = failedAt - killedAt;
    waiter.join();
    const bool ok = r == hetcclRemoteError && msg.find(needle) != std::string::npos && killedAt > 0 && delay <= 10.0 &&
                    waitRc == hetcclRemoteError && waitMsg.find(needle) != std::string::npos;
    std::printf("fault_rma_kill: rank %d: %s: put: code %d after %.3f s: %s; notify wait: code %d: %s\n", env.rank,
                ok ? "OK" : "FAIL", r, delay, msg.c_str(), waitRc, waitMsg.c_str());
    std::fflush(stdout);
    hetcclCommAbort(comm);
    return ok ? 0 : 1;
  }
  std::printf("fault_rma_kill: rank %d: FAIL: no error\n", env.rank);
  return 1;
}
