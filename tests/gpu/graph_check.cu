// Device collectives inside CUDA graphs (under hetccl-run): every collective is captured once
// (cudaStreamBeginCapture, global mode), then each graph is replayed --replays times (>= 5) with fresh
// inputs written by a kernel on the same stream before each replay, the graphs one after the other with
// eager calls of other collectives between them; every output is checked on the device against the
// exact expected values after every round. --expect refuse: the path refuses capture (the staged path):
// every call made during a capture returns hetcclInvalidUsage naming the path, the capture still ends
// cleanly, and the same calls made eagerly are exact.
// Prints "graph_check: rank R: OK ..." and exits 0, or explains; 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

enum Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv, kKinds };
const char* kNames[] = {"allreduce", "broadcast", "reduce", "allgather", "reducescatter", "alltoall", "sendrecv"};

// Rank r's input element j in round `round`: small integers, exact in float32 and in any summation order.
__device__ __host__ float inputValue(int r, int round, size_t j) {
  return static_cast<float>((r + 1) * (round + 1) + static_cast<int>(j % 7));
}

__global__ void fill(float* p, size_t n, int rank, int round) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{blockDim.x} * gridDim.x)
    p[i] = inputValue(rank, round, i);
}

__device__ float sumOver(int n, int round, size_t j) {
  float s = 0;
  for (int r = 0; r < n; ++r) s += inputValue(r, round, j);
  return s;
}

// Counts the output elements that differ from the expected result of `kind`.
__global__ void countWrong(int kind, const float* out, size_t outElems, size_t count, int rank, int n, int root,
                           int round, unsigned long long* wrong) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < outElems; i += size_t{blockDim.x} * gridDim.x) {
    float want = 0;
    switch (kind) {
      case kAllReduce: want = sumOver(n, round, i); break;
      case kBroadcast: want = inputValue(root, round, i); break;
      case kReduce: want = sumOver(n, round, i); break;
      case kAllGather: want = inputValue(static_cast<int>(i / count), round, i % count); break;
      case kReduceScatter: want = sumOver(n, round, rank * count + i); break;
      case kAllToAll: want = inputValue(static_cast<int>(i / count), round, rank * count + i % count); break;
      default: want = inputValue((rank + n - 1) % n, round, i); break;
    }
    if (out[i] != want) atomicAdd(wrong, 1ull);
  }
}

struct Case {
  Kind kind;
  size_t count, inElems, outElems;
  float *in = nullptr, *out = nullptr;
  cudaGraphExec_t exec = nullptr;
};

hetcclResult_t issue(const Case& c, hetcclComm_t comm, int rank, int n, int root, cudaStream_t s) {
  switch (c.kind) {
    case kAllReduce: return hetcclAllReduce(c.in, c.out, c.count, hetcclFloat32, hetcclSum, comm, s);
    case kBroadcast: return hetcclBroadcast(c.in, c.out, c.count, hetcclFloat32, root, comm, s);
    case kReduce: return hetcclReduce(c.in, c.out, c.count, hetcclFloat32, hetcclSum, root, comm, s);
    case kAllGather: return hetcclAllGather(c.in, c.out, c.count, hetcclFloat32, comm, s);
    case kReduceScatter: return hetcclReduceScatter(c.in, c.out, c.count, hetcclFloat32, hetcclSum, comm, s);
    case kAllToAll: return hetcclAlltoAll(c.in, c.out, c.count, hetcclFloat32, comm, s);
    default: {
      hetcclGroupStart();
      hetcclSend(c.in, c.count, hetcclFloat32, (rank + 1) % n, comm, s);
      hetcclRecv(c.out, c.count, hetcclFloat32, (rank + n - 1) % n, comm, s);
      return hetcclGroupEnd();
    }
  }
}

int argInt(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

bool argIs(int argc, char** argv, const char* name, const char* value) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strcmp(argv[i + 1], value) == 0;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("graph_check: SKIPPED: no CUDA device\n");
    return 77;
  }
  try {
    const bool refuse = argIs(argc, argv, "--expect", "refuse");
    const int replays = argInt(argc, argv, "--replays", 5);
    const auto count = static_cast<size_t>(argInt(argc, argv, "--count", 1 << 20));
    auto env = hetccl::tools::readLaunchEnv();
    check(cudaSetDevice(env.localRank % devices), "cudaSetDevice");
    hetcclComm_t comm;
    if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess)
      throw std::runtime_error(std::string("init: ") + hetcclGetLastError(nullptr));
    const int rank = env.rank, n = env.size, root = n - 1;
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    unsigned long long* wrong;
    check(cudaMallocManaged(&wrong, sizeof *wrong), "cudaMallocManaged");
    std::vector<Case> cases;
    for (int k = 0; k < kKinds; ++k) {
      if (k == kSendRecv && n < 2) continue;
      Case c{static_cast<Kind>(k), count, count, count};
      if (k == kAllGather) c.outElems = n * count;
      if (k == kReduceScatter) c.inElems = n * count;
      if (k == kAllToAll) c.inElems = c.outElems = n * count;
      check(cudaMalloc(&c.in, c.inElems * sizeof(float)), "cudaMalloc");
      check(cudaMalloc(&c.out, c.outElems * sizeof(float)), "cudaMalloc");
      cases.push_back(c);
    }
    Case eager{kAllReduce, count / 2 + 3, count / 2 + 3, count / 2 + 3};  // between replays
    check(cudaMalloc(&eager.in, eager.inElems * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&eager.out, eager.outElems * sizeof(float)), "cudaMalloc");

    // Capture every collective into a graph of its own.
    int refused = 0;
    std::string refusal;
    for (Case& c : cases) {
      check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
      const hetcclResult_t r = issue(c, comm, rank, n, root, s);
      if (r != hetcclSuccess) {
        refusal = hetcclGetLastError(comm);
        ++refused;
      }
      cudaGraph_t graph;
      check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
      if (r == hetcclSuccess) {
        check(cudaGraphInstantiate(&c.exec, graph, 0), "cudaGraphInstantiate");
      } else if (r != hetcclInvalidUsage || !refuse) {
        throw std::runtime_error(std::string("capturing ") + kNames[c.kind] + ": " + refusal);
      }
      check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    }
    if (refuse) {
      const bool named = refusal.find("staged path") != std::string::npos;
      // The refused calls changed nothing: the same calls made eagerly are exact.
      unsigned long long bad = 0;
      for (const Case& c : cases) {
        fill<<<256, 256, 0, s>>>(c.in, c.inElems, rank, 1);
        if (issue(c, comm, rank, n, root, s) != hetcclSuccess)
          throw std::runtime_error(std::string("eager ") + kNames[c.kind] + ": " + hetcclGetLastError(comm));
        *wrong = 0;
        if (c.kind != kReduce || rank == root)
          countWrong<<<256, 256, 0, s>>>(c.kind, c.out, c.outElems, c.count, rank, n, root, 1, wrong);
        check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        bad += *wrong;
      }
      const bool ok = refused == static_cast<int>(cases.size()) && named && bad == 0;
      std::printf("graph_check: rank %d: %s (refused %d of %zu captures, message names the path: %s, eager wrong "
                  "elements: %llu): %s\n",
                  rank, ok ? "OK" : "FAIL", refused, cases.size(), named ? "yes" : "no", bad, refusal.c_str());
      hetcclCommDestroy(comm);
      return ok ? 0 : 1;
    }

    // Replays with fresh inputs, eager calls between them, every output checked every round.
    unsigned long long badTotal = 0;
    for (int round = 1; round <= replays; ++round) {
      for (size_t i = 0; i < cases.size(); ++i) {
        fill<<<256, 256, 0, s>>>(cases[i].in, cases[i].inElems, rank, round);
        check(cudaMemsetAsync(cases[i].out, 0xff, cases[i].outElems * sizeof(float), s), "cudaMemsetAsync");
        check(cudaGraphLaunch(cases[i].exec, s), "cudaGraphLaunch");
        if (i == 2 || i + 1 == cases.size()) {  // an eager call between and after the replays
          fill<<<256, 256, 0, s>>>(eager.in, eager.inElems, rank, round + 100);
          if (issue(eager, comm, rank, n, root, s) != hetcclSuccess)
            throw std::runtime_error(std::string("eager allreduce: ") + hetcclGetLastError(comm));
          *wrong = 0;
          countWrong<<<256, 256, 0, s>>>(kAllReduce, eager.out, eager.outElems, eager.count, rank, n, root,
                                         round + 100, wrong);
          check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
          if (*wrong) std::printf("graph_check: rank %d: round %d: eager allreduce: %llu wrong\n", rank, round, *wrong);
          badTotal += *wrong;
        }
      }
      for (const Case& c : cases) {
        if (c.kind == kReduce && rank != root) continue;
        *wrong = 0;
        countWrong<<<256, 256, 0, s>>>(c.kind, c.out, c.outElems, c.count, rank, n, root, round, wrong);
        check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        if (*wrong)
          std::printf("graph_check: rank %d: replay %d: %s: %llu wrong\n", rank, round, kNames[c.kind], *wrong);
        badTotal += *wrong;
      }
    }
    hetcclResult_t async = hetcclSuccess;
    hetcclCommGetAsyncError(comm, &async);
    const bool ok = badTotal == 0 && async == hetcclSuccess;
    std::printf("graph_check: rank %d: %s (%zu collectives x %d replays of %zu floats, wrong elements: %llu, async "
                "error: %d)\n",
                rank, ok ? "OK" : "FAIL", cases.size(), replays, count, badTotal, static_cast<int>(async));
    for (Case& c : cases) cudaGraphExecDestroy(c.exec);
    hetcclCommDestroy(comm);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graph_check: %s\n", e.what());
    return 2;
  }
}
