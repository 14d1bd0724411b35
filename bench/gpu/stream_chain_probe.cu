// What does the stream pipeline's per-piece handshake cost on one GPU? (issue 26: mid sizes)
//
// One GPU plays both ends of one ring direction of a 1+1 all-reduce: a sender stream copies pieces from
// device memory into a pinned ring (device -> host) and a receiver stream copies them out (host -> device),
// at the same time, which is what each GPU of a 1+1 pair does. Between them the handshake of
// src/exec/pipeline/stream_program.cc, in stream memory operations on the ring's headers, in these variants:
//
//   chain    the committed handshake: sender waits empty, copies, writes 4 stamp words + length + full;
//            receiver writes release (2) + expect record (5), waits full + 4 stamp words, copies
//   token    the same, but "full" is a token derived from the stamp: the receiver waits for one word
//   lanes2   the committed handshake on two sender and two receiver streams, pieces alternating between them
//   token2   token + lanes2
//   kwait    token, every wait a one-thread kernel polling the word (no stream memory operation waits)
//   writes   events between the streams, plus the committed handshake's writes (what the writes alone cost)
//   (CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, which would make writes cheaper, is refused by the v2 batch
//   call of CUDA 12/13: "invalid argument")
//   minsend  token, the sender writes only the full token (no stamp words, no length)
//   minrecv  token, the receiver writes only the release (no expect record)
//   min      token, and only the writes the handshake needs: the sender's full, the receiver's release
//   events   no memory operations: the receiver's stream waits for an event after the sender's copy (a bound:
//            events do not cross processes)
//   copies   the two copies whole, unchunked, concurrently (the copy engines' ceiling for this traffic)
//
// Prints one line per (variant, bytes, chunk): microseconds per call and GB/s per direction, the median of
// ROUNDS rounds of CALLS back-to-back calls, and the host's time to queue one call (host_us: where it is
// above us/call, the host's queueing bounds the figure). Build: nvcc -O2 -arch=sm_90 -o stream_chain_probe
// stream_chain_probe.cu -lcuda. Run: ./stream_chain_probe [rounds] (bench/results/ has the runs).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)
#define CD(x)                                                                       \
  do {                                                                              \
    CUresult r_ = (x);                                                              \
    if (r_ != CUDA_SUCCESS) {                                                       \
      const char* s_ = nullptr;                                                     \
      cuGetErrorString(r_, &s_);                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

namespace {

constexpr int kSlots = 8;
constexpr int kHeaderWords = 8;  // 64 bytes per slot header, as the ring's
constexpr int kMaxLanes = 2;

struct Ring {
  uint64_t* headers = nullptr;  // [kSlots][kHeaderWords]
  uint64_t* expect = nullptr;   // [kMaxLanes][8]
  char* data = nullptr;         // [kSlots][chunk]
  size_t chunk = 0;
  uint64_t* header(uint64_t k) const { return headers + (k % kSlots) * kHeaderWords; }
  char* slot(uint64_t k) const { return data + (k % kSlots) * chunk; }
};

class Batch {
 public:
  Batch& write(uint64_t* word, uint64_t value) {
    CUstreamBatchMemOpParams& p = add();
    p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    p.writeValue.address = reinterpret_cast<CUdeviceptr>(word);
    p.writeValue.value64 = value;
    p.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    return *this;
  }
  Batch& waitEq(uint64_t* word, uint64_t value) {
    CUstreamBatchMemOpParams& p = add();
    p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
    p.waitValue.address = reinterpret_cast<CUdeviceptr>(word);
    p.waitValue.value64 = value;
    p.waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    return *this;
  }
  void queue(cudaStream_t s) {
    if (n_) CD(cuStreamBatchMemOp(reinterpret_cast<CUstream>(s), n_, ops_, 0));
    n_ = 0;
  }

 private:
  CUstreamBatchMemOpParams& add() {
    CUstreamBatchMemOpParams& p = ops_[n_++];
    std::memset(&p, 0, sizeof p);
    return p;
  }
  CUstreamBatchMemOpParams ops_[16];
  unsigned n_ = 0;
};

uint64_t tokenOf(const uint64_t w[4]) {  // any non-zero mix of the stamp words
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 4; ++i) {
    h ^= w[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h | 1;
}

struct Variant {
  std::string name;
  bool token = false;
  int lanes = 1;
  bool events = false;
  bool whole = false;
  bool kernelWait = false;
  bool writes = false;  // with events: the handshake's writes too
  bool minimalSend = false;  // token; the sender writes only the full token
  bool minimalRecv = false;  // token; the receiver writes only the release
};

__global__ void pollEq(const volatile uint64_t* word, uint64_t value) {
  while (*word != value) {
  }
}

struct Setup {
  cudaStream_t main{};
  cudaStream_t send[kMaxLanes]{}, recv[kMaxLanes]{};
  std::vector<cudaEvent_t> events;  // taken in order each call
  size_t nextEvent = 0;
  cudaEvent_t take() {
    if (nextEvent == events.size()) {
      cudaEvent_t e;
      CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events.push_back(e);
    }
    return events[nextEvent++];
  }
};

uint64_t gCall = 0;

void oneCall(Setup& su, const Variant& v, Ring& ring, const char* src, char* dst, size_t bytes) {
  su.nextEvent = 0;
  ++gCall;
  if (v.whole) {
    cudaEvent_t go = su.take();
    CK(cudaEventRecord(go, su.main));
    CK(cudaStreamWaitEvent(su.send[0], go, 0));
    CK(cudaStreamWaitEvent(su.recv[0], go, 0));
    CK(cudaMemcpyAsync(ring.data, src, bytes, cudaMemcpyDeviceToHost, su.send[0]));
    CK(cudaMemcpyAsync(dst, ring.data + bytes, bytes, cudaMemcpyHostToDevice, su.recv[0]));
    for (cudaStream_t s : {su.send[0], su.recv[0]}) {
      cudaEvent_t e = su.take();
      CK(cudaEventRecord(e, s));
      CK(cudaStreamWaitEvent(su.main, e, 0));
    }
    return;
  }
  const uint64_t pieces = (bytes + ring.chunk - 1) / ring.chunk;
  cudaEvent_t go = su.take();
  CK(cudaEventRecord(go, su.main));
  for (int l = 0; l < v.lanes; ++l) {
    CK(cudaStreamWaitEvent(su.send[l], go, 0));
    CK(cudaStreamWaitEvent(su.recv[l], go, 0));
  }
  std::vector<int64_t> lastOf(v.lanes, -1);
  for (uint64_t k = 0; k < pieces; ++k) {
    const int l = static_cast<int>(k % v.lanes);
    const size_t off = k * ring.chunk, len = std::min<size_t>(ring.chunk, bytes - off);
    uint64_t stamp[4] = {0x5354414dull, gCall, bytes, k};
    const uint64_t full = v.token ? tokenOf(stamp) : 1;
    uint64_t* h = ring.header(k);
    Batch b;
    if (v.kernelWait) pollEq<<<1, 1, 0, su.send[l]>>>(h, 0);
    else if (!v.events) b.waitEq(h, 0).queue(su.send[l]);
    CK(cudaMemcpyAsync(ring.slot(k), src + off, len, cudaMemcpyDeviceToHost, su.send[l]));
    cudaEvent_t copied = nullptr;
    if (v.events) {
      copied = su.take();
      CK(cudaEventRecord(copied, su.send[l]));
    }
    if (v.minimalSend) {
      b.write(h, full).queue(su.send[l]);
    } else if (!v.events || v.writes) {
      for (int w = 0; w < 4; ++w) b.write(h + 1 + w, stamp[w]);
      b.write(h + 5, len).write(h, full).queue(su.send[l]);
    }
    // receiver
    uint64_t* ex = ring.expect + l * 8;
    if (v.events) CK(cudaStreamWaitEvent(su.recv[l], copied, 0));
    if (v.minimalRecv) {
      if (lastOf[l] >= 0) b.write(ring.header(lastOf[l]), 0).queue(su.recv[l]);
    } else if (!v.events || v.writes) {
      if (lastOf[l] >= 0) b.write(ex, 0).write(ring.header(lastOf[l]), 0);
      for (int w = 0; w < 4; ++w) b.write(ex + 1 + w, stamp[w]);
      b.write(ex, k % kSlots + 1).queue(su.recv[l]);
    }
    if (v.kernelWait) {
      pollEq<<<1, 1, 0, su.recv[l]>>>(h, full);
    } else if (!v.events) {
      b.waitEq(h, full);
      if (!v.token)
        for (int w = 0; w < 4; ++w) b.waitEq(h + 1 + w, stamp[w]);
      b.queue(su.recv[l]);
    }
    CK(cudaMemcpyAsync(dst + off, ring.slot(k), len, cudaMemcpyHostToDevice, su.recv[l]));
    lastOf[l] = static_cast<int64_t>(k);
  }
  for (int l = 0; l < v.lanes; ++l) {
    if ((!v.events || v.writes) && lastOf[l] >= 0) {
      Batch b;
      if (!v.minimalRecv) b.write(ring.expect + l * 8, 0);
      b.write(ring.header(lastOf[l]), 0).queue(su.recv[l]);
    }
    for (cudaStream_t s : {su.send[l], su.recv[l]}) {
      cudaEvent_t e = su.take();
      CK(cudaEventRecord(e, s));
      CK(cudaStreamWaitEvent(su.main, e, 0));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const int calls = 10;
  CK(cudaSetDevice(0));
  CD(cuInit(0));
  int memops = 0;
  CD(cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device %s, 64-bit stream memory operations: %d, slots %d\n", prop.name, memops, kSlots);
  const size_t maxBytes = 64ull << 20, maxChunk = 4ull << 20;
  char *src = nullptr, *dst = nullptr, *host = nullptr;
  CK(cudaMalloc(&src, maxBytes));
  CK(cudaMalloc(&dst, maxBytes));
  CK(cudaMemset(src, 7, maxBytes));
  const size_t hostBytes = 2 * maxBytes + 4096 + kSlots * maxChunk;
  CK(cudaHostAlloc(&host, hostBytes, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(host, 0, hostBytes);
  Ring ring;
  ring.headers = reinterpret_cast<uint64_t*>(host);
  ring.expect = ring.headers + kSlots * kHeaderWords;
  ring.data = host + 4096;
  Setup su;
  CK(cudaStreamCreateWithFlags(&su.main, cudaStreamNonBlocking));
  for (int l = 0; l < kMaxLanes; ++l) {
    CK(cudaStreamCreateWithFlags(&su.send[l], cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&su.recv[l], cudaStreamNonBlocking));
  }
  const std::vector<Variant> variants = {{"chain"},       {"token", true},       {"lanes2", false, 2},
                                         {"token2", true, 2}, {"kwait", true, 1, false, false, true},
                                         {"writes", false, 1, true, false, false, true},
                                         {"minsend", true, 1, false, false, false, false, true, false},
                                         {"minrecv", true, 1, false, false, false, false, false, true},
                                         {"min", true, 1, false, false, false, false, true, true},
                                         {"events", false, 1, true},
                                         {"copies", false, 1, false, true}};
  const std::vector<size_t> sizes = {8, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 25 << 20, 64 << 20};
  const std::vector<size_t> chunks = {1 << 20, 2 << 20, 4 << 20};
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  std::printf("%-8s %10s %8s %10s %8s %10s\n", "variant", "bytes", "chunk", "us/call", "GB/s", "host_us");
  for (size_t bytes : sizes) {
    for (size_t chunk : chunks) {
      if (chunk > bytes && chunk != chunks.front()) continue;  // one piece whatever the chunk
      ring.chunk = chunk;
      for (const Variant& v : variants) {
        if (v.whole && chunk != chunks.front()) continue;
        std::vector<double> us, hostUs;
        for (int r = 0; r < rounds; ++r) {
          for (int i = 0; i < 3; ++i) oneCall(su, v, ring, src, dst, bytes);
          CK(cudaEventRecord(t0, su.main));
          const auto h0 = std::chrono::steady_clock::now();
          for (int i = 0; i < calls; ++i) oneCall(su, v, ring, src, dst, bytes);
          hostUs.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / calls);
          CK(cudaEventRecord(t1, su.main));
          CK(cudaEventSynchronize(t1));
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, t0, t1));
          us.push_back(ms * 1000.0 / calls);
        }
        std::sort(us.begin(), us.end());
        std::sort(hostUs.begin(), hostUs.end());
        const double med = us[us.size() / 2];
        std::printf("%-8s %10zu %8zu %10.1f %8.2f %10.1f\n", v.name.c_str(), bytes, v.whole ? bytes : chunk, med,
                    bytes / med / 1e3, hostUs[hostUs.size() / 2]);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
