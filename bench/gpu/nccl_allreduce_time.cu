// NCCL's own all-reduce time per call on device buffers, measured the way hetccl-perf and nccl-tests measure
// it (warm-up, a barrier, N calls back to back on one stream, one synchronisation, wall time / N), so that the
// baseline of the latency-path benchmark carries no framework's per-call cost (PyTorch adds 25-35 us).
// One process per GPU, started by the caller:
//   NCCL_TIME_RANK=r NCCL_TIME_NRANKS=n NCCL_TIME_ID_FILE=/tmp/id nccl_allreduce_time [-b 8] [-e 1M] [-f 2] [-n 200] [-w 20]
// Rank 0 writes the NCCL unique id to the file, the others wait for it. Prints "rank R bytes B time_us T" per
// size (float32 sum, out of place), the number of wrong elements of the last call's result, and the host's
// time per call to queue the calls (where it is close to time_us, the host bounds the figure). Build: nvcc -O2 -o nccl_allreduce_time nccl_allreduce_time.cu -lnccl
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

void cudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void ncclCheck(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
    std::exit(1);
  }
}
size_t parseSize(const char* s) {
  char* end = nullptr;
  size_t v = std::strtoull(s, &end, 10);
  if (*end == 'K') v <<= 10;
  if (*end == 'M') v <<= 20;
  if (*end == 'G') v <<= 30;
  return v;
}
int envInt(const char* name) {
  const char* v = std::getenv(name);
  if (!v) {
    std::fprintf(stderr, "set %s\n", name);
    std::exit(2);
  }
  return std::atoi(v);
}

}  // namespace

int main(int argc, char** argv) {
  size_t minBytes = 8, maxBytes = 1 << 20;
  int factor = 2, iters = 200, warmup = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "-b") minBytes = parseSize(argv[i + 1]);
    else if (a == "-e") maxBytes = parseSize(argv[i + 1]);
    else if (a == "-f") factor = std::atoi(argv[i + 1]);
    else if (a == "-n") iters = std::atoi(argv[i + 1]);
    else if (a == "-w") warmup = std::atoi(argv[i + 1]);
  }
  const int rank = envInt("NCCL_TIME_RANK"), nranks = envInt("NCCL_TIME_NRANKS");
  const char* idFile = std::getenv("NCCL_TIME_ID_FILE");
  if (!idFile) return std::fprintf(stderr, "set NCCL_TIME_ID_FILE\n"), 2;
  int devices = 0;
  cudaCheck(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  cudaCheck(cudaSetDevice(rank % devices), "cudaSetDevice");
  ncclUniqueId id;
  if (rank == 0) {
    ncclCheck(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const std::string tmp = std::string(idFile) + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof id);
    std::rename(tmp.c_str(), idFile);
  } else {
    for (int waited = 0;; ++waited) {
      std::ifstream in(idFile, std::ios::binary);
      if (in && in.read(reinterpret_cast<char*>(&id), sizeof id)) break;
      if (waited > 30000) return std::fprintf(stderr, "no id in %s\n", idFile), 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ncclComm_t comm;
  ncclCheck(ncclCommInitRank(&comm, nranks, id, rank), "ncclCommInitRank");
  cudaStream_t stream;
  cudaCheck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  float *send, *recv, *one;
  cudaCheck(cudaMalloc(&send, maxBytes), "cudaMalloc");
  cudaCheck(cudaMalloc(&recv, maxBytes), "cudaMalloc");
  cudaCheck(cudaMalloc(&one, sizeof(float)), "cudaMalloc");
  // Inputs (rank + 1) * (i % 13 + 1): small integers, so every sum is exact and the result is checked.
  std::vector<float> host(maxBytes / sizeof(float));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((rank + 1) * (i % 13 + 1));
  cudaCheck(cudaMemcpy(send, host.data(), maxBytes / sizeof(float) * sizeof(float), cudaMemcpyHostToDevice), "fill");
  const float ranksSum = static_cast<float>(nranks * (nranks + 1) / 2);
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= factor) {
    const size_t count = bytes / sizeof(float);
    cudaCheck(cudaMemset(recv, 0, bytes), "cudaMemset");
    for (int i = 0; i < warmup; ++i) ncclCheck(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream), "warm-up");
    ncclCheck(ncclAllReduce(one, one, 1, ncclFloat, ncclSum, comm, stream), "barrier");  // as a barrier
    cudaCheck(cudaStreamSynchronize(stream), "sync");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) ncclCheck(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream), "call");
    const auto queued = std::chrono::steady_clock::now();
    cudaCheck(cudaStreamSynchronize(stream), "sync");
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iters;
    const double hostUs = std::chrono::duration<double, std::micro>(queued - start).count() / iters;
    cudaCheck(cudaMemcpy(host.data(), recv, count * sizeof(float), cudaMemcpyDeviceToHost), "check copy");
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += host[i] != ranksSum * static_cast<float>(i % 13 + 1);
    std::printf("rank %d bytes %zu time_us %.2f wrong %zu host_us %.2f\n", rank, bytes, us, wrong, hostUs);
    std::fflush(stdout);
    if (factor < 2) break;
  }
  ncclCommDestroy(comm);
  if (rank == 0) std::remove(idFile);
  return 0;
}
