// Where a small device all-reduce's time goes on the host (issue 26's breakdown): under hetccl-run, each rank
// times (1) the CUDA calls hetccl makes per call -- cudaPointerGetAttributes, cudaStreamGetCaptureInfo, an
// empty kernel's launch -- and (2) hetcclAllReduce of `bytes` on device buffers: the host time per call with
// N calls queued back to back (what the caller's thread pays) and the time per call including the device
// (N calls, one synchronisation). When (2a) is close to (2b) the path is host-bound.
//   hetccl-run -n 2 --domains 2 -- call_cost_probe [bytes=8] [calls=2000] [inplace]
// (inplace: the all-reduce reads and writes one buffer, as PyTorch's all_reduce does)
// Prints one line per measure on rank 0. Build (bench/gpu/run_call_cost_probe.sh does):
//   nvcc -O2 -std=c++17 -Iinclude -Itools call_cost_probe.cu -o call_cost_probe \
//     -Lbuild -lhetccl build/libhetccl_tools_common.a
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(hetcclResult_t r, const char* what) {
  if (r != hetcclSuccess) throw std::runtime_error(std::string(what) + ": " + hetcclGetLastError(nullptr));
}

__global__ void emptyKernel() {}

template <typename F>
double microsPerCall(int n, F f) {
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 8;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 2000;
  const bool inPlace = argc > 3 && std::string(argv[3]) == "inplace";
  try {
    auto env = hetccl::tools::readLaunchEnv();
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check(cudaSetDevice(env.localRank % devices), "cudaSetDevice");
    hetcclComm_t comm;
    check(hetcclCommInitRank(&comm, env.size, env.id, env.rank), "hetcclCommInitRank");
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    float *send, *recv;
    check(cudaMalloc(&send, bytes + 4), "cudaMalloc");
    check(cudaMalloc(&recv, bytes + 4), "cudaMalloc");
    const size_t count = bytes / sizeof(float) ? bytes / sizeof(float) : 1;

    cudaPointerAttributes attr;
    const double pointerQuery = microsPerCall(calls, [&] { (void)cudaPointerGetAttributes(&attr, send); });
    cudaStreamCaptureStatus status;
    const double captureInfo = microsPerCall(calls, [&] { (void)cudaStreamGetCaptureInfo(s, &status, nullptr); });
    for (int i = 0; i < 100; ++i) emptyKernel<<<1, 32, 0, s>>>();
    check(cudaStreamSynchronize(s), "sync");
    const double launch = microsPerCall(calls, [&] { emptyKernel<<<1, 32, 0, s>>>(); });
    check(cudaStreamSynchronize(s), "sync");

    float* out = inPlace ? send : recv;
    auto allReduce = [&] { check(hetcclAllReduce(send, out, count, hetcclFloat32, hetcclSum, comm, s), "allreduce"); };
    for (int i = 0; i < 100; ++i) allReduce();
    check(cudaStreamSynchronize(s), "sync");
    check(hetcclAllReduce(send, recv, 1, hetcclFloat32, hetcclSum, comm, s), "barrier");
    check(cudaStreamSynchronize(s), "sync");
    const auto start = Clock::now();
    const double hostPerCall = microsPerCall(calls, allReduce);
    check(cudaStreamSynchronize(s), "sync");
    const double totalPerCall = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
    if (env.rank == 0) {
      std::printf("call_cost_probe: %d ranks, %zu bytes, %d calls%s\n", env.size, count * sizeof(float), calls,
                  inPlace ? ", in place" : "");
      std::printf("  cudaPointerGetAttributes      %7.2f us per call\n", pointerQuery);
      std::printf("  cudaStreamGetCaptureInfo      %7.2f us per call\n", captureInfo);
      std::printf("  empty kernel launch (host)    %7.2f us per call\n", launch);
      std::printf("  hetcclAllReduce, host only    %7.2f us per call (calls queued back to back)\n", hostPerCall);
      std::printf("  hetcclAllReduce, with device  %7.2f us per call (the same calls and one synchronisation)\n",
                  totalPerCall);
    }
    check(cudaStreamSynchronize(s), "sync");
    hetcclCommDestroy(comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "call_cost_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
