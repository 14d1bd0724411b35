// Shared fixture of the GPU runtime tests: loads the CUDA plugin through the core's loader and skips the
// test, with the reason, when there is no plugin or no device (the normal case on a CPU-only machine).
// Set HETCCL_TEST_REQUIRE_GPU=1 (tests/gpu/run_on_device.sh does) to turn that skip into a failure.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "device/gpu_runtime.hpp"
#include "device/loader.hpp"
#include "require_gpu.hpp"

namespace hetccl::device::test {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = cudaRuntime();
    if (!rt_) {
      const std::string reason = gpuPluginUnavailableReason(DeviceKind::Cuda);
      if (hetccl::test::gpuRequired()) FAIL() << "HETCCL_TEST_REQUIRE_GPU=1 but: " << reason;
      GTEST_SKIP() << "no CUDA device: " << reason;
    }
    stream_ = rt_->createStream();
  }
  void TearDown() override {
    if (rt_ && stream_) {
      rt_->synchronize(stream_);
      rt_->destroyStream(stream_);
    }
  }

  GpuRuntime* rt_ = nullptr;
  GpuRuntime::Stream stream_ = nullptr;
};

/// Owns one allocation of a GpuRuntime (device or pinned).
class GpuBuffer {
 public:
  enum class Where { Device, Pinned };
  GpuBuffer(GpuRuntime& rt, size_t bytes, Where where) : rt_(rt), where_(where), bytes_(bytes) {
    ptr_ = where == Where::Device ? rt.alloc(bytes) : rt.allocPinned(bytes);
  }
  ~GpuBuffer() { where_ == Where::Device ? rt_.free(ptr_) : rt_.freePinned(ptr_); }
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;

  void* get() const { return ptr_; }
  unsigned char* bytes() const { return static_cast<unsigned char*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  GpuRuntime& rt_;
  Where where_;
  size_t bytes_;
  void* ptr_ = nullptr;
};

/// Polls `done` until it returns true or 10 s pass; false on timeout (the caller fails the test).
template <typename Done>
bool pollFor(Done&& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done())
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

}  // namespace hetccl::device::test
