// Ranks that disagree on a device all-reduce's count (under hetccl-run, two domains: the stream
// pipeline): rank 0 sums `count` floats, the others 2 x count. The call is queued, the stream must not
// hang (it is released), and every rank must then report hetcclInvalidUsage through
// hetcclCommGetAsyncError with a message naming both ranks' byte counts.
// Prints "mismatch_check_gpu: rank R: OK ..." and exits 0, or explains; 77 without a GPU.
// Usage: mismatch_check_gpu [COUNT]: rank 0's count (default 3 Mi floats; a few floats take the latency path).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("mismatch_check_gpu: SKIPPED: no CUDA device\n");
    return 77;
  }
  try {
    auto env = hetccl::tools::readLaunchEnv();
    check(cudaSetDevice(env.localRank % devices), "cudaSetDevice");
    hetcclComm_t comm;
    if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess)
      throw std::runtime_error(std::string("init: ") + hetcclGetLastError(nullptr));
    // Past the first chunk (HETCCL_GPU_CHUNK_BYTES, 4 MiB by default): the first transfers look alike.
    const size_t count = argc > 1 ? std::stoull(argv[1]) : size_t{3} << 20, mine = env.rank == 0 ? count : 2 * count;
    float* buf;
    check(cudaMalloc(&buf, 2 * count * sizeof(float)), "cudaMalloc");
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    const hetcclResult_t queued = hetcclAllReduce(buf, buf, mine, hetcclFloat32, hetcclSum, comm, s);
    const auto start = std::chrono::steady_clock::now();
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");  // released, not hung
    hetcclResult_t async = hetcclSuccess;
    while (async == hetcclSuccess && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
      hetcclCommGetAsyncError(comm, &async);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string msg = hetcclGetLastError(comm);
    const std::string a = std::to_string(count * sizeof(float)) + " bytes";
    const std::string b = std::to_string(2 * count * sizeof(float)) + " bytes";
    const bool ok = queued == hetcclSuccess && async == hetcclInvalidUsage &&
                    msg.find("disagree") != std::string::npos && msg.find(a) != std::string::npos &&
                    msg.find(b) != std::string::npos;
    std::printf("mismatch_check_gpu: rank %d: %s (queued: %d, async error %d after %.2f s): %s\n", env.rank,
                ok ? "OK" : "FAIL", static_cast<int>(queued), static_cast<int>(async), seconds, msg.c_str());
    hetcclCommDestroy(comm);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mismatch_check_gpu: %s\n", e.what());
    return 2;
  }
}
