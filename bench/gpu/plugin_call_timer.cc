// plugin_call_timer: a GPU plugin that times the host side of every runtime call the core makes per
// collective (issue 26: where a mid-size call's host time goes). It loads the real plugin,
// `libhetccl-cuda-real.so` from its own directory (or $HETCCL_TIMED_PLUGIN), exports the same table with
// the per-call entry points wrapped, and at exit prints one line per entry point used:
//   plugin_call_timer rank R ENTRY calls N total_us T mean_us M max_us X
// (R: $NCCL_TIME_RANK as bench/gpu/nccl_allreduce_time.cu takes it, else the process id).
// Build (see bench/results/plugin_call_costs_h200x2_2026-11-30/README.md):
//   g++ -O2 -shared -fPIC -Isrc -o DIR/libhetccl-cuda.so bench/gpu/plugin_call_timer.cc -ldl
//   cp BUILD/libhetccl-cuda.so DIR/libhetccl-cuda-real.so
// and point HETCCL_CUDA_PLUGIN at DIR/libhetccl-cuda.so. Times include the wrapper's two clock reads
// (~40 ns). Not part of the product.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "device/base/gpu_plugin.h"

extern "C" {
__attribute__((visibility("default"))) hetcclGpuPlugin_t hetcclGpuPlugin_v4;
}

namespace {

constexpr int kEntries = 32;
const char* gName[kEntries];
std::atomic<uint64_t> gCalls[kEntries], gNanos[kEntries], gMax[kEntries];

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

void account(int i, uint64_t ns) {
  gCalls[i].fetch_add(1, std::memory_order_relaxed);
  gNanos[i].fetch_add(ns, std::memory_order_relaxed);
  uint64_t m = gMax[i].load(std::memory_order_relaxed);
  while (ns > m && !gMax[i].compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
  }
}

template <int I, typename F>
struct Timed;
template <int I, typename... A>
struct Timed<I, int (*)(A...)> {
  static inline int (*real)(A...) = nullptr;
  static int call(A... a) {
    const uint64_t t0 = nowNs();
    const int rc = real(a...);
    account(I, nowNs() - t0);
    return rc;
  }
};

#define HETCCL_TIME_ENTRY(I, field)                                              \
  do {                                                                           \
    using T = Timed<I, decltype(hetcclGpuPlugin_t::field)>;                      \
    T::real = hetcclGpuPlugin_v4.field;                                          \
    if (T::real) hetcclGpuPlugin_v4.field = &T::call;                            \
    gName[I] = #field;                                                           \
  } while (0)

std::string realPath() {
  if (const char* p = std::getenv("HETCCL_TIMED_PLUGIN")) return p;
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(&nowNs), &info);
  std::string self = info.dli_fname ? info.dli_fname : "";
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/libhetccl-cuda-real.so";
}

__attribute__((constructor)) void load() {
  const std::string path = realPath();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const auto* real = h ? static_cast<const hetcclGpuPlugin_t*>(dlsym(h, "hetcclGpuPlugin_v4")) : nullptr;
  if (!real) {
    std::fprintf(stderr, "plugin_call_timer: cannot load %s: %s\n", path.c_str(), dlerror());
    std::abort();
  }
  hetcclGpuPlugin_v4 = *real;
  HETCCL_TIME_ENTRY(0, eventRecord);
  HETCCL_TIME_ENTRY(1, streamWaitEvent);
  HETCCL_TIME_ENTRY(2, memcpyAsync);
  HETCCL_TIME_ENTRY(3, reduce);
  HETCCL_TIME_ENTRY(4, streamOps);
  HETCCL_TIME_ENTRY(5, streamCaptureInfo);
  HETCCL_TIME_ENTRY(6, eventQuery);
  HETCCL_TIME_ENTRY(7, streamQuery);
  HETCCL_TIME_ENTRY(8, getDevice);
  HETCCL_TIME_ENTRY(9, setDevice);
  HETCCL_TIME_ENTRY(10, pointerQuery);
  HETCCL_TIME_ENTRY(11, memsetAsync);
  HETCCL_TIME_ENTRY(12, llAllReduce);
  HETCCL_TIME_ENTRY(13, scale);
  HETCCL_TIME_ENTRY(14, divide);
  HETCCL_TIME_ENTRY(15, devicePointer);
  HETCCL_TIME_ENTRY(16, streamSynchronize);
  HETCCL_TIME_ENTRY(17, eventSynchronize);
  HETCCL_TIME_ENTRY(18, memcpyBatchAsync);
  HETCCL_TIME_ENTRY(19, eventCreate);
}

__attribute__((destructor)) void report() {
  const char* rank = std::getenv("NCCL_TIME_RANK");
  const std::string who = rank ? rank : std::to_string(getpid());
  for (int i = 0; i < kEntries; ++i) {
    const uint64_t n = gCalls[i].load();
    if (!gName[i] || n == 0) continue;
    const double total = static_cast<double>(gNanos[i].load()) / 1e3;
    std::fprintf(stderr, "plugin_call_timer rank %s %s calls %llu total_us %.1f mean_us %.3f max_us %.1f\n",
                 who.c_str(), gName[i], static_cast<unsigned long long>(n), total, total / n,
                 static_cast<double>(gMax[i].load()) / 1e3);
  }
}

}  // namespace
