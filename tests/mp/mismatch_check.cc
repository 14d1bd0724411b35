// mismatch_check: ranks deliberately disagree (rank 0 all-reduces 10 floats, the others 20; then rank 0
// broadcasts 1 float, the others 0: a call that moves nothing on most ranks); with HETCCL_CHECK_CALLS=1
// every rank must get hetcclInvalidUsage naming both calls at that call, nothing written, and the
// communicator must still work afterwards. Prints "mismatch_check: rank R: OK" on success.
#include <cstdio>
#include <string>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

int main() {
  auto env = hetccl::tools::readLaunchEnv();
  hetcclComm_t comm;
  if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess) return 2;
  std::vector<float> buf(20, 1.0f);
  const size_t count = env.rank == 0 ? 10 : 20;
  hetcclResult_t r = hetcclAllReduce(buf.data(), buf.data(), count, hetcclFloat32, hetcclSum, comm, nullptr);
  std::string msg = hetcclGetLastError(comm);
  bool ok = r == hetcclInvalidUsage && msg.find("of 10 float32") != std::string::npos &&
            msg.find("of 20 float32") != std::string::npos && buf[0] == 1.0f;
  // Broadcast of 1 element at the root and 0 elsewhere (without the check, the stamps catch it only at the
  // next call: docs/RELIABILITY.md).
  std::vector<float> bcast(1, env.rank == 0 ? 7.0f : 3.0f);
  r = hetcclBroadcast(bcast.data(), bcast.data(), env.rank == 0 ? 1 : 0, hetcclFloat32, 0, comm, nullptr);
  std::string bmsg = hetcclGetLastError(comm);
  ok = ok && r == hetcclInvalidUsage && bmsg.find("of 1 float32") != std::string::npos &&
       bmsg.find("of 0 float32") != std::string::npos && bcast[0] == (env.rank == 0 ? 7.0f : 3.0f);
  if (r != hetcclInvalidUsage) msg += " | broadcast 1 vs 0 returned " + std::to_string(static_cast<int>(r));
  msg += " | " + bmsg;
  // Still usable: an agreeing call succeeds with the right sum.
  float x = 1;
  ok = ok && hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, comm, nullptr) == hetcclSuccess &&
       x == static_cast<float>(env.size);
  std::printf("mismatch_check: rank %d: %s: %s\n", env.rank, ok ? "OK" : "FAIL", msg.c_str());
  hetcclCommDestroy(comm);
  return ok ? 0 : 1;
}
