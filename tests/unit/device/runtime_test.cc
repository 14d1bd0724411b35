// The tests' device runtime registry and host runtime (tests/support), and memoryKindName.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "device/base/runtime.hpp"
#include "support/runtime_registry.hpp"

namespace hetccl::device {
namespace {

/// A stand-in device runtime whose "device memory" is one host array it claims as its own.
class FakeDeviceRuntime final : public Runtime {
 public:
  explicit FakeDeviceRuntime(MemoryKind kind) : kind_(kind), arena_(4096) {}
  MemoryKind kind() const noexcept override { return kind_; }
  const char* name() const noexcept override { return "fake"; }
  void* alloc(size_t) override { return arena_.data(); }
  void free(void*) noexcept override {}
  void copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill(void* dst, int value, size_t bytes) override { std::memset(dst, value, bytes); }
  bool owns(const void* ptr) const noexcept override {
    auto p = reinterpret_cast<uintptr_t>(ptr), base = reinterpret_cast<uintptr_t>(arena_.data());
    return p >= base && p < base + arena_.size();
  }

 private:
  MemoryKind kind_;
  std::vector<unsigned char> arena_;
};

TEST(HostRuntime, AllocatesAlignedMemoryCopiesAndFills) {
  Runtime& host = runtimes().get(MemoryKind::Host);
  EXPECT_EQ(host.kind(), MemoryKind::Host);
  auto* a = static_cast<unsigned char*>(host.alloc(1000));
  auto* b = static_cast<unsigned char*>(host.alloc(1000));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  host.fill(a, 0x5a, 1000);
  host.copy(b, a, 1000);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b[i], 0x5a) << i;
  EXPECT_EQ(runtimes().kindOf(a), MemoryKind::Host);
  host.free(a);
  host.free(b);
  host.free(nullptr);
  EXPECT_THROW(host.alloc(0), InvalidArgument);
}

TEST(RuntimeRegistry, AbsentDeviceRuntimeIsNullOrANamedError) {
  RuntimeRegistry registry;
  EXPECT_EQ(registry.find(MemoryKind::Cuda), nullptr);
  try {
    registry.get(MemoryKind::Hip);
    FAIL() << "expected InvalidUsage";
  } catch (const InvalidUsage& e) {
    EXPECT_NE(std::string(e.what()).find("hip"), std::string::npos) << e.what();
  }
}

TEST(RuntimeRegistry, QueriesTheKindThroughRegisteredRuntimes) {
  RuntimeRegistry registry;
  auto fake = std::make_unique<FakeDeviceRuntime>(MemoryKind::Cuda);
  Runtime* fakePtr = fake.get();
  registry.add(std::move(fake));
  EXPECT_EQ(registry.find(MemoryKind::Cuda), fakePtr);
  void* deviceBuffer = fakePtr->alloc(16);
  int onHost = 0;
  EXPECT_EQ(registry.kindOf(deviceBuffer), MemoryKind::Cuda);
  EXPECT_EQ(registry.kindOf(&onHost), MemoryKind::Host);
  EXPECT_THROW(registry.add(std::make_unique<FakeDeviceRuntime>(MemoryKind::Cuda)), InvalidUsage);
  EXPECT_THROW(registry.add(nullptr), InvalidArgument);
  EXPECT_STREQ(memoryKindName(MemoryKind::Cuda), "cuda");
}

}  // namespace
}  // namespace hetccl::device
