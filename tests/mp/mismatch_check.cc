// mismatch_check: ranks deliberately disagree (rank 0 all-reduces 10 floats, the others 20); with
// HETCCL_CHECK_CALLS=1 every rank must get hetcclInvalidUsage naming both calls, and the communicator
// must still work afterwards. Prints "mismatch_check: rank R: OK" on success.
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
  // Still usable: an agreeing call succeeds with the right sum.
  float x = 1;
  ok = ok && hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, comm, nullptr) == hetcclSuccess &&
       x == static_cast<float>(env.size);
  std::printf("mismatch_check: rank %d: %s: %s\n", env.rank, ok ? "OK" : "FAIL", msg.c_str());
  hetcclCommDestroy(comm);
  return ok ? 0 : 1;
}
