// Shared by the plugin_*_test.cc cases, which run every entry point of libhetccl-hip.so (hetcclGpuPlugin_v4)
// against the fake HIP runtime in this process, in the default configuration (ROCm 6 runtime, 2 devices of
// gfx90a, stream memory operations supported): result checks, the plugin and fake accessors, RAII streams
// and buffers. Configurations of their own (no runtime, no device, other versions, architectures, cache)
// run in child processes: scenarios_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "harness.hpp"

namespace hip_test {

#define EXPECT_GPU_OK(call)                                          \
  do {                                                               \
    const int rc_ = (call);                                          \
    EXPECT_EQ(rc_, HETCCL_GPU_OK) << #call << ": " << P().lastError(); \
  } while (0)
#define ASSERT_GPU_OK(call)                                          \
  do {                                                               \
    const int rc_ = (call);                                          \
    ASSERT_EQ(rc_, HETCCL_GPU_OK) << #call << ": " << P().lastError(); \
  } while (0)

inline const hetcclGpuPlugin_t& P() { return plugin(); }
inline const Fake& F() {
  P();  // the plugin opens the fake first
  return fake();
}

/// The thread's last error must name `call` and the HIP error.
inline void expectRuntimeError(int rc, const char* call, const char* hipError) {
  EXPECT_EQ(rc, HETCCL_GPU_ERR_RUNTIME);
  const std::string text = P().lastError();
  EXPECT_NE(text.find(call), std::string::npos) << "lastError: " << text;
  if (hipError) {
    EXPECT_NE(text.find(hipError), std::string::npos) << "lastError: " << text;
  }
}

struct Stream {
  void* s = nullptr;
  Stream() { EXPECT_GPU_OK(P().streamCreate(&s)); }
  ~Stream() { EXPECT_GPU_OK(P().streamDestroy(s)); }
  operator void*() const { return s; }
};
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_GPU_OK(P().allocDevice(&p, bytes)); }
  ~DeviceBuffer() { EXPECT_GPU_OK(P().freeDevice(p)); }
  template <typename T = char>
  T* as() const { return static_cast<T*>(p); }
};
struct PinnedBuffer {
  void* p = nullptr;
  explicit PinnedBuffer(size_t bytes) {
    EXPECT_GPU_OK(P().allocPinned(&p, bytes));
    std::memset(p, 0, bytes);
  }
  ~PinnedBuffer() { EXPECT_GPU_OK(P().freePinned(p)); }
  template <typename T = char>
  T* as() const { return static_cast<T*>(p); }
};

inline uint64_t badAccessesNow() { return fake().snapshot().badAccesses; }

/// Fails the test if the fake saw a bad access (a kernel or copy touching memory the device cannot reach)
/// while it ran.
struct NoBadAccess {
  uint64_t before = badAccessesNow();
  ~NoBadAccess() { EXPECT_EQ(badAccessesNow(), before) << fake().lastBadAccess(); }
};

inline volatile uint64_t* word(void* p, size_t i = 0) { return static_cast<volatile uint64_t*>(p) + i; }

}  // namespace hip_test
