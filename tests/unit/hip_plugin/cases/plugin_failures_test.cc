// The plugin against injected HIP runtime failures (each names its call, none is sticky) and many threads
// on their own streams at once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "core/types.hpp"
#include "harness.hpp"
#include "plugin_helpers.hpp"

namespace hip_test {
namespace {

using hetccl::DataType;

// ---------------------------------------------------------------------------------------------------
// Runtime failures: each plugin function whose HIP call fails returns ERR_RUNTIME naming the call and the
// error, and the next call works (no sticky leftover).

struct Injection {
  const char* hipFunction;
  int error;  // 0: the fake's usual one
  const char* errorName;
  std::function<int()> call;
};

TEST(HipPlugin, InjectedRuntimeFailuresNameTheCall) {
  Stream s;
  DeviceBuffer d(256), d2(256);
  PinnedBuffer pinned(256);
  void* e = nullptr;
  ASSERT_GPU_OK(P().eventCreate(&e));
  void* tmp = nullptr;
  const std::vector<Injection> cases = {
      {"hipMalloc", 0, "hipErrorOutOfMemory", [&] { return P().allocDevice(&tmp, 64); }},
      {"hipFree", 0, "hipErrorInvalidValue", [&] {
         void* p = nullptr;
         EXPECT_GPU_OK(P().allocDevice(&p, 8));
         const int rc = P().freeDevice(p);
         P().freeDevice(p);
         return rc;
       }},
      {"hipHostMalloc", 0, "hipErrorOutOfMemory", [&] { return P().allocPinned(&tmp, 64); }},
      {"hipHostFree", 0, "hipErrorInvalidValue", [&] {
         void* p = nullptr;
         EXPECT_GPU_OK(P().allocPinned(&p, 8));
         const int rc = P().freePinned(p);
         P().freePinned(p);
         return rc;
       }},
      {"hipHostRegister", 0, "hipErrorOutOfMemory", [&] { static char area[64]; return P().hostRegister(area, 64); }},
      {"hipSetDevice", 0, "hipErrorInvalidDevice", [&] { return P().setDevice(0); }},
      {"hipGetDeviceCount", 999, "hipErrorUnknown", [&] { int c; return P().deviceCount(&c); }},
      {"hipGetDevice", 999, "hipErrorUnknown", [&] { int c; return P().getDevice(&c); }},
      {"hipRuntimeGetVersion", 999, "hipErrorUnknown", [&] { int a, b; return P().versions(&a, &b); }},
      {"hipPointerGetAttributes", 999, "hipErrorUnknown", [&] { int a, b; return P().pointerQuery(d.p, &a, &b); }},
      {"hipStreamCreateWithFlags", 0, "hipErrorOutOfMemory", [&] { return P().streamCreate(&tmp); }},
      {"hipStreamSynchronize", 0, "hipErrorLaunchFailure", [&] { return P().streamSynchronize(s); }},
      {"hipStreamQuery", 0, "hipErrorLaunchFailure", [&] { return P().streamQuery(s); }},
      {"hipEventCreateWithFlags", 0, "hipErrorOutOfMemory", [&] { return P().eventCreate(&tmp); }},
      {"hipEventRecord", 0, "hipErrorInvalidHandle", [&] { return P().eventRecord(e, s); }},
      {"hipEventQuery", 0, "hipErrorInvalidHandle", [&] { return P().eventQuery(e); }},
      {"hipEventSynchronize", 0, "hipErrorInvalidHandle", [&] { return P().eventSynchronize(e); }},
      {"hipStreamWaitEvent", 0, "hipErrorInvalidHandle", [&] { return P().streamWaitEvent(s, e); }},
      {"hipMemcpyAsync", 0, "hipErrorInvalidValue", [&] { return P().memcpyAsync(d.p, d2.p, 64, s); }},
      {"hipMemsetAsync", 0, "hipErrorInvalidValue", [&] { return P().memsetAsync(d.p, 0, 64, s); }},
      {"hipMemcpy", 0, "hipErrorInvalidValue", [&] { return P().memcpySync(d.p, d2.p, 64); }},
      {"hipMemset", 0, "hipErrorInvalidValue", [&] { return P().memsetSync(d.p, 0, 64); }},
      {"hipStreamWaitValue64", 0, "hipErrorInvalidValue",
       [&] { return P().streamWaitFlag(s, pinned.as<uint64_t>(), 0, 0); }},
      {"hipStreamWriteValue64", 0, "hipErrorInvalidValue",
       [&] { return P().streamWriteFlag(s, pinned.as<uint64_t>(), 0, 0); }},
      {"hipModuleLaunchKernel", 0, "hipErrorLaunchFailure", [&] { return P().reduce(d.p, d2.p, 8, 7, 0, s); }},
      {"hipModuleLaunchKernel", 0, "hipErrorLaunchFailure",
       [&] { return P().streamWriteFlag(s, pinned.as<uint64_t>(), 0, HETCCL_GPU_FLAG_FORCE_KERNEL); }},
      {"hipStreamGetCaptureInfo", 0, "hipErrorInvalidHandle", [&] {
         int c;
         uint64_t id;
         return P().streamCaptureInfo(s, &c, &id);
       }},
      {"hipHostGetDevicePointer", 0, "hipErrorInvalidValue",
       [&] { return P().streamWriteFlag(s, pinned.as<uint64_t>(), 0, 0); }},
  };
  for (const Injection& c : cases) {
    SCOPED_TRACE(c.hipFunction);
    F().failCall(c.hipFunction, 1, c.error);
    expectRuntimeError(c.call(), c.hipFunction, c.errorName);
    F().failCall(nullptr, 0, 0);
    EXPECT_GPU_OK(P().streamSynchronize(s));  // nothing sticky
  }
  EXPECT_GPU_OK(P().eventDestroy(e));
}

// Many threads on their own streams at once (the plugin is thread-safe).
TEST(HipPlugin, ConcurrentThreads) {
  NoBadAccess noBadAccess;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      if (P().setDevice(t % 2) != HETCCL_GPU_OK) failures++;
      void *s = nullptr, *a = nullptr, *b = nullptr, *flag = nullptr;
      if (P().streamCreate(&s) || P().allocDevice(&a, 4096) || P().allocDevice(&b, 4096) || P().allocPinned(&flag, 64)) {
        failures++;
        return;
      }
      std::vector<int32_t> x(1024, t), y(1024, 1);
      for (int i = 0; i < 20; ++i) {
        if (P().memcpyAsync(a, x.data(), 4096, s) || P().memcpyAsync(b, y.data(), 4096, s) ||
            P().reduce(a, b, 1024, static_cast<int>(DataType::Int32), 0, s) ||
            P().streamWriteFlag(s, static_cast<uint64_t*>(flag), i + 1, i % 2 ? HETCCL_GPU_FLAG_FORCE_KERNEL : 0) ||
            P().memcpyAsync(x.data(), a, 4096, s) || P().streamSynchronize(s))
          failures++;
        if (x[1023] != t + i + 1 || *static_cast<uint64_t*>(flag) != static_cast<uint64_t>(i + 1)) failures++;
        x.assign(1024, x[0]);
      }
      P().freeDevice(a);
      P().freeDevice(b);
      P().freePinned(flag);
      P().streamDestroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace hip_test
