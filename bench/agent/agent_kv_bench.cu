// Agent KV-block read benchmark (hetccl_agent.h, issue 29): a "prefill" process registers a KV cache
// (layers x blocks x blockBytes, CUDA or host memory), a "decode" process that never shared a
// communicator with it loads its metadata and reads N blocks of every layer (N x layers ranges) with ONE
// prepared transfer, posted reps times, with a notification after the last read. Every byte is checked
// once per size. Baseline in the same run, same process: the pinned-copy ceiling of the window path (the
// slower of a D2H copy into pinned memory and an H2D copy out of it, each of the transfer's total bytes;
// the window pipelines the two, on two processes' copy engines; host memory: one memcpy of those bytes) and, for
// CUDA, the device-to-device ceiling of the IPC path (one cudaMemcpyPeer of those bytes). Also: time from the decode agent's
// creation to the end of its first transfer (load, connect, handshake, windows, first read).
//
//   agent_kv_bench [--device cuda|host] [--gpu-prefill 0] [--gpu-decode 0] [--layers 32] [--cache-blocks 1024]
//                  [--block-bytes 65536] [--blocks 1,16,64,256] [--reps 10]
// Build (CUDA): nvcc -O2 -arch=sm_90 -Iinclude bench/agent/agent_kv_bench.cu -Lbuild -lhetccl -o agent_kv_bench
// With --device host the CUDA runtime is never touched (any machine).
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hetccl/hetccl_agent.h"

#define CK(x)                                                                                      \
  do {                                                                                             \
    hetcclResult_t r_ = (x);                                                                       \
    if (r_ != hetcclSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s -> %d: %s\n", __FILE__, __LINE__, #x, r_, hetcclGetLastError(nullptr)); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)
#define CU(x)                                                                                          \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));       \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Args {
  bool cuda = true;
  int gpuPrefill = 0, gpuDecode = 0, layers = 32, cacheBlocks = 1024, reps = 10;
  size_t blockBytes = 65536;
  std::vector<int> blocks{1, 16, 64, 256};
};

const char kSecret[] = "agent-kv-bench-secret-0123456789";

unsigned char pattern(size_t i) { return static_cast<unsigned char>((i * 2654435761u) >> 13); }

// Which cache block the decode side reads as its i-th block (spread over the cache, as a real block table).
size_t blockAt(int i, int cacheBlocks) { return (static_cast<size_t>(i) * 37 + 5) % cacheBlocks; }

void* allocate(bool cuda, size_t bytes) {
  void* p = nullptr;
  if (cuda) CU(cudaMalloc(&p, bytes));
  else p = std::malloc(bytes);
  return p;
}

void upload(bool cuda, void* dst, const std::vector<unsigned char>& src) {
  if (cuda) CU(cudaMemcpy(dst, src.data(), src.size(), cudaMemcpyHostToDevice));
  else std::memcpy(dst, src.data(), src.size());
}

void download(bool cuda, std::vector<unsigned char>& dst, const void* src) {
  if (cuda) CU(cudaMemcpy(dst.data(), src, dst.size(), cudaMemcpyDeviceToHost));
  else std::memcpy(dst.data(), src, dst.size());
}

hetcclAgent_t makeAgent(const char* name, int device) {
  hetcclAgentOptions_t o;
  CK(hetcclAgentOptionsInit(&o));
  o.secret = kSecret;
  o.secretBytes = sizeof kSecret - 1;
  o.listenAddress = "127.0.0.1:0";
  o.device = device;
  o.timeoutSeconds = 60;
  hetcclAgent_t a;
  CK(hetcclAgentCreate(name, &o, &a));
  return a;
}

int prefill(const Args& a, int blobFd, int doneFd) {
  if (a.cuda) CU(cudaSetDevice(a.gpuPrefill));
  const size_t bytes = static_cast<size_t>(a.layers) * a.cacheBlocks * a.blockBytes;
  void* cache = allocate(a.cuda, bytes);
  std::vector<unsigned char> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = pattern(i);
  upload(a.cuda, cache, host);
  hetcclAgent_t ag = makeAgent("prefill", a.cuda ? a.gpuPrefill : -1);
  hetcclAgentMem_t mem;
  uint32_t id;
  CK(hetcclAgentRegister(ag, cache, bytes, &mem, &id));
  size_t n = 0;
  CK(hetcclAgentGetMetadata(ag, nullptr, &n));
  std::vector<unsigned char> blob(n);
  CK(hetcclAgentGetMetadata(ag, blob.data(), &n));
  const uint64_t len = n;
  if (write(blobFd, &len, sizeof len) != sizeof len || write(blobFd, blob.data(), n) != static_cast<ssize_t>(n)) return 2;
  // Serve until the decode side says it is done (its last notification), at most 10 minutes.
  const auto t0 = Clock::now();
  int got = 0;
  char from[HETCCL_AGENT_NAME_MAX + 1];
  char msg[HETCCL_AGENT_NOTIF_MAX];
  size_t mb = 0;
  int notes = 0;
  while (secondsSince(t0) < 600) {
    CK(hetcclAgentGetNotif(ag, from, msg, sizeof msg, &mb, &got));
    if (got) {
      ++notes;
      if (mb == 4 && std::memcmp(msg, "bye!", 4) == 0) break;
    } else {
      usleep(1000);
    }
  }
  char c = 0;
  (void)!read(doneFd, &c, 1);
  std::printf("prefill: %d notifications received\n", notes);
  CK(hetcclAgentDeregister(mem));
  CK(hetcclAgentDestroy(ag));
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// GB/s of one copy of `bytes` between device memory and pinned host memory, median of 5.
double pinnedCopyGBs(size_t bytes, bool toHost) {
  void *d, *h;
  CU(cudaMalloc(&d, bytes));
  CU(cudaMallocHost(&h, bytes));
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<double> t;
  for (int i = 0; i < 6; ++i) {
    const auto t0 = Clock::now();
    CU(cudaMemcpyAsync(toHost ? h : d, toHost ? d : h, bytes, toHost ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, s));
    CU(cudaStreamSynchronize(s));
    if (i) t.push_back(secondsSince(t0));
  }
  CU(cudaStreamDestroy(s));
  CU(cudaFree(d));
  CU(cudaFreeHost(h));
  return bytes / median(t) / 1e9;
}

/// GB/s of one device-to-device copy of `bytes` from GPU `from` to GPU `to` (the ceiling of the agents'
/// IPC path, where the target copies device to device), median of 5. Leaves `to` current.
double deviceCopyGBs(size_t bytes, int from, int to) {
  void *src, *dst;
  CU(cudaSetDevice(from));
  CU(cudaMalloc(&src, bytes));
  CU(cudaSetDevice(to));
  CU(cudaMalloc(&dst, bytes));
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<double> t;
  for (int i = 0; i < 6; ++i) {
    const auto t0 = Clock::now();
    CU(cudaMemcpyPeerAsync(dst, to, src, from, bytes, s));
    CU(cudaStreamSynchronize(s));
    if (i) t.push_back(secondsSince(t0));
  }
  CU(cudaStreamDestroy(s));
  CU(cudaFree(dst));
  CU(cudaSetDevice(from));
  CU(cudaFree(src));
  CU(cudaSetDevice(to));
  return bytes / median(t) / 1e9;
}

/// GB/s of one memcpy of `bytes` between two host buffers (the host path's ceiling: the window path is a
/// copy in and a copy out, pipelined on two processes), median of 5.
double memcpyGBs(size_t bytes) {
  std::vector<unsigned char> a(bytes, 1), b(bytes, 2);
  std::vector<double> t;
  for (int i = 0; i < 6; ++i) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    if (i) t.push_back(secondsSince(t0));
  }
  return bytes / median(t) / 1e9;
}

int decode(const Args& a, int blobFd) {
  if (a.cuda) CU(cudaSetDevice(a.gpuDecode));
  uint64_t len = 0;
  if (read(blobFd, &len, sizeof len) != sizeof len || len > 1 << 20) return 2;
  std::vector<unsigned char> blob(len);
  size_t at = 0;
  while (at < len) {
    const ssize_t r = read(blobFd, blob.data() + at, len - at);
    if (r <= 0) return 2;
    at += r;
  }
  const int maxBlocks = *std::max_element(a.blocks.begin(), a.blocks.end());
  const size_t localBytes = static_cast<size_t>(a.layers) * maxBlocks * a.blockBytes;
  void* local = allocate(a.cuda, localBytes);
  const auto created = Clock::now();
  hetcclAgent_t ag = makeAgent("decode", a.cuda ? a.gpuDecode : -1);
  hetcclAgentMem_t mem;
  uint32_t id;
  CK(hetcclAgentRegister(ag, local, localBytes, &mem, &id));
  char peer[HETCCL_AGENT_NAME_MAX + 1];
  CK(hetcclAgentLoadRemote(ag, blob.data(), blob.size(), peer));
  std::printf("| device | blocks | ranges | MiB | median ms | GB/s | ceiling GB/s | vs ceiling | d2d GB/s | vs d2d | first transfer ms | check |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  bool first = true;
  for (int n : a.blocks) {
    std::vector<hetcclAgentRange_t> ranges;
    for (int l = 0; l < a.layers; ++l)
      for (int i = 0; i < n; ++i)
        ranges.push_back(hetcclAgentRange_t{id, 0, (static_cast<size_t>(l) * n + i) * a.blockBytes,
                                            (static_cast<size_t>(l) * a.cacheBlocks + blockAt(i, a.cacheBlocks)) * a.blockBytes,
                                            a.blockBytes});
    const size_t total = ranges.size() * a.blockBytes;
    hetcclAgentXfer_t x;
    CK(hetcclAgentPrepXfer(ag, hetcclAgentRead, peer, ranges.data(), ranges.size(), "blocks", 6, &x));
    double firstMs = 0;
    std::vector<double> times;
    for (int r = 0; r < a.reps + 1; ++r) {
      const auto t0 = Clock::now();
      CK(hetcclAgentPostXfer(x));
      CK(hetcclAgentWaitXfer(x));
      if (first) {
        firstMs = secondsSince(created) * 1e3;
        first = false;
      }
      if (r) times.push_back(secondsSince(t0));
    }
    // Check every byte against the prefill pattern.
    std::vector<unsigned char> got(static_cast<size_t>(a.layers) * n * a.blockBytes);
    download(a.cuda, got, local);
    bool ok = true;
    for (int l = 0; l < a.layers && ok; ++l)
      for (int i = 0; i < n && ok; ++i) {
        const size_t src = (static_cast<size_t>(l) * a.cacheBlocks + blockAt(i, a.cacheBlocks)) * a.blockBytes;
        const size_t dst = (static_cast<size_t>(l) * n + i) * a.blockBytes;
        for (size_t k = 0; k < a.blockBytes; ++k)
          if (got[dst + k] != pattern(src + k)) {
            std::fprintf(stderr, "MISMATCH layer %d block %d byte %zu\n", l, i, k);
            ok = false;
            break;
          }
      }
    const double t = median(times);
    double ceiling = 0;
    ceiling = a.cuda ? std::min(pinnedCopyGBs(total, true), pinnedCopyGBs(total, false)) : memcpyGBs(total);
    const double d2d = a.cuda ? deviceCopyGBs(total, a.gpuPrefill, a.gpuDecode) : 0;
    std::printf("| %s | %d | %zu | %.1f | %.3f | %.2f | %.2f | %.2fx | %.1f | %.2fx | %s | %s |\n", a.cuda ? "cuda" : "host", n,
                ranges.size(), total / 1048576.0, t * 1e3, total / t / 1e9, ceiling, ceiling > 0 ? total / t / 1e9 / ceiling : 0.0,
                d2d, d2d > 0 ? total / t / 1e9 / d2d : 0.0, firstMs > 0 ? std::to_string(firstMs).c_str() : "", ok ? "ok" : "MISMATCH");
    std::fflush(stdout);
    CK(hetcclAgentReleaseXfer(x));
    if (!ok) return 1;
  }
  CK(hetcclAgentGenNotif(ag, peer, "bye!", 4));
  CK(hetcclAgentDeregister(mem));
  CK(hetcclAgentDestroy(ag));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--device") a.cuda = v == "cuda";
    else if (k == "--gpu-prefill") a.gpuPrefill = std::stoi(v);
    else if (k == "--gpu-decode") a.gpuDecode = std::stoi(v);
    else if (k == "--layers") a.layers = std::stoi(v);
    else if (k == "--cache-blocks") a.cacheBlocks = std::stoi(v);
    else if (k == "--block-bytes") a.blockBytes = std::stoul(v);
    else if (k == "--reps") a.reps = std::stoi(v);
    else if (k == "--blocks") {
      a.blocks.clear();
      size_t p = 0;
      while (p < v.size()) {
        const size_t q = v.find(',', p);
        a.blocks.push_back(std::stoi(v.substr(p, q - p)));
        p = q == std::string::npos ? v.size() : q + 1;
      }
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  int blob[2], done[2];
  if (pipe(blob) || pipe(done)) return 2;
  const pid_t child = fork();  // before any CUDA call: each process initialises its own runtime
  if (child == 0) {
    close(blob[0]);
    close(done[1]);
    return prefill(a, blob[1], done[0]);
  }
  close(blob[1]);
  close(done[0]);
  const int rc = decode(a, blob[0]);
  close(done[1]);
  int status = 0;
  waitpid(child, &status, 0);
  return rc != 0 ? rc : (WIFEXITED(status) ? WEXITSTATUS(status) : 3);
}
