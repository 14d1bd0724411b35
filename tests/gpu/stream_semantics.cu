// Stream semantics of device collectives (2 ranks under hetccl-run):
//  1. the call returns while earlier work on the stream is still running (the host is not blocked);
//  2. a kernel queued after the collective on the same stream sees its result;
//  3. two communicators on two streams both make progress.
// Prints "stream_semantics: rank R: OK" and exits 0, or explains the failure; 77 without a GPU (1 under
// HETCCL_TEST_REQUIRE_GPU=1).
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"
#include "require_gpu.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(hetcclResult_t r, const char* what) {
  if (r != hetcclSuccess) throw std::runtime_error(std::string(what) + ": " + hetcclGetLastError(nullptr));
}

__global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
__global__ void fill(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) p[i] = v;
}
// Counts elements different from `want` (run after the collective on the same stream).
__global__ void countWrong(const float* p, size_t n, float want, unsigned long long* wrong) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    if (p[i] != want) atomicAdd(wrong, 1ull);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    return hetccl::test::cannotRunExitStatus("stream_semantics", "no CUDA device");
  try {
    auto env = hetccl::tools::readLaunchEnv();
    check(cudaSetDevice(env.localRank % devices), "cudaSetDevice");
    hetcclComm_t comm, comm2;
    check(hetcclCommInitRank(&comm, env.size, env.id, env.rank), "init");
    check(hetcclCommSplit(comm, 0, env.rank, &comm2, nullptr), "split");
    const size_t n = 1 << 20;
    float *buf, *buf2;
    unsigned long long* wrong;
    check(cudaMalloc(&buf, n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&buf2, n * sizeof(float)), "cudaMalloc");
    check(cudaMallocManaged(&wrong, sizeof *wrong), "cudaMallocManaged");
    *wrong = 0;
    cudaStream_t s1, s2;
    check(cudaStreamCreate(&s1), "stream");
    check(cudaStreamCreate(&s2), "stream");
    // Warm-up: a communicator's first device collective allocates its pinned staging, and that allocation
    // may wait for the whole device; the semantics below are those of every later call of the same size.
    check(hetcclAllReduce(buf, buf, n, hetcclFloat32, hetcclSum, comm, s1), "warm-up allreduce on s1");
    check(hetcclAllReduce(buf2, buf2, n, hetcclFloat32, hetcclSum, comm2, s2), "warm-up allreduce on s2");
    check(cudaStreamSynchronize(s1), "warm-up sync s1");
    check(cudaStreamSynchronize(s2), "warm-up sync s2");
    fill<<<256, 256, 0, s1>>>(buf, n, float(env.rank + 1));
    fill<<<256, 256, 0, s2>>>(buf2, n, float(10 * (env.rank + 1)));
    // 1. ~0.5 s of GPU work ahead of the collective: the call must return long before it ends.
    spin<<<1, 1, 0, s1>>>(1000000000LL);
    check(hetcclAllReduce(buf, buf, n, hetcclFloat32, hetcclSum, comm, s1), "allreduce on s1");
    bool returnedEarly = cudaStreamQuery(s1) == cudaErrorNotReady;
    // 3. a second communicator on a second stream, issued while the first is still held up.
    check(hetcclAllReduce(buf2, buf2, n, hetcclFloat32, hetcclSum, comm2, s2), "allreduce on s2");
    // 2. a kernel after the collective on the same stream sees the sum.
    const float want = float(env.size * (env.size + 1) / 2);
    countWrong<<<256, 256, 0, s1>>>(buf, n, want, wrong);
    countWrong<<<256, 256, 0, s2>>>(buf2, n, 10 * want, wrong);
    check(cudaStreamSynchronize(s1), "sync s1");
    check(cudaStreamSynchronize(s2), "sync s2");
    hetcclResult_t async = hetcclSuccess;
    hetcclCommGetAsyncError(comm, &async);
    bool ok = returnedEarly && *wrong == 0 && async == hetcclSuccess;
    std::printf("stream_semantics: rank %d: %s (returned before earlier stream work ended: %s, wrong elements: %llu)\n",
                env.rank, ok ? "OK" : "FAIL", returnedEarly ? "yes" : "no", *wrong);
    check(hetcclCommDestroy(comm2), "destroy");
    check(hetcclCommDestroy(comm), "destroy");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_semantics: %s\n", e.what());
    return 2;
  }
}
