// Why the IPC path's KV get of 256 blocks (8192 ranges of 256 KiB) moves ~50 GB/s while the device gathers
// the same blocks at ~1.7 TB/s: the same 8192 device-to-device copies in ONE process, no IPC, no second
// process on the GPU: (a) one cudaMemcpyAsync per range, (b) one cudaMemcpyBatchAsync, (c) one gather kernel
// over the range list, (d) cudaMemcpyAsync of the same bytes as one contiguous copy. GPU time by events,
// median of 5 after a warm-up. Build: nvcc -O2 -arch=sm_90 copy_probe.cu -o copy_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

struct Range {
  unsigned long long dst, src, bytes;
};

__global__ void gather(unsigned char* dst, const unsigned char* src, const Range* ranges, int n) {
  for (int r = blockIdx.x; r < n; r += gridDim.x) {
    const Range g = ranges[r];
    const uint4* s = reinterpret_cast<const uint4*>(src + g.src);
    uint4* d = reinterpret_cast<uint4*>(dst + g.dst);
    for (unsigned long long i = threadIdx.x; i < g.bytes / 16; i += blockDim.x) d[i] = s[i];
  }
}

int main() {
  const int n = 8192;
  const size_t block = 256 << 10, total = size_t(n) * block;
  unsigned char *src, *dst;
  CHECK(cudaMalloc(&src, total));
  CHECK(cudaMalloc(&dst, total));
  CHECK(cudaMemset(src, 7, total));
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(1));
  std::vector<Range> ranges(n);
  std::vector<void*> dsts(n), srcs(n);
  std::vector<size_t> sizes(n, block);
  for (int i = 0; i < n; ++i) {
    ranges[i] = {i * block, perm[i] * block, block};
    dsts[i] = dst + ranges[i].dst;
    srcs[i] = src + ranges[i].src;
  }
  Range* dranges;
  CHECK(cudaMalloc(&dranges, n * sizeof(Range)));
  CHECK(cudaMemcpy(dranges, ranges.data(), n * sizeof(Range), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  auto time = [&](const char* name, auto&& body) {
    std::vector<float> ms;
    for (int rep = 0; rep < 6; ++rep) {
      CHECK(cudaEventRecord(a, s));
      body();
      CHECK(cudaEventRecord(b, s));
      CHECK(cudaEventSynchronize(b));
      float t;
      CHECK(cudaEventElapsedTime(&t, a, b));
      if (rep) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const float m = ms[ms.size() / 2];
    std::printf("%-44s %9.3f ms %9.1f GB/s %7.2f us per range\n", name, m, total / (m * 1e6), m * 1e3 / n);
  };
  time("(a) cudaMemcpyAsync per range", [&] {
    for (int i = 0; i < n; ++i) CHECK(cudaMemcpyAsync(dsts[i], srcs[i], block, cudaMemcpyDeviceToDevice, s));
  });
  time("(b) cudaMemcpyBatchAsync (8192 ranges)", [&] {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t attrIdx = 0;
    CHECK(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), n, &attr, &attrIdx, 1, s));
  });
  time("(c) one gather kernel over the range list", [&] { gather<<<1056, 512, 0, s>>>(dst, src, dranges, n); });
  time("(d) one contiguous cudaMemcpyAsync", [&] { CHECK(cudaMemcpyAsync(dst, src, total, cudaMemcpyDeviceToDevice, s)); });
  // the kernel's result is exact
  std::vector<unsigned char> h(block);
  CHECK(cudaMemset(src + size_t(perm[5]) * block, 9, block));
  gather<<<1056, 512, 0, s>>>(dst, src, dranges, n);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(h.data(), dst + 5 * block, block, cudaMemcpyDeviceToHost));
  std::printf("gather exact on a marked block: %s\n", std::all_of(h.begin(), h.end(), [](unsigned char c) { return c == 9; }) ? "yes" : "NO");
  return 0;
}
