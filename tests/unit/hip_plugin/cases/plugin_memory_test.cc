// The plugin's memory functions against the fake HIP runtime: device and pinned allocations, pointer
// queries, host registration (a shared segment too), device pointers, copies and memsets in every direction.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "harness.hpp"
#include "plugin_helpers.hpp"

namespace hip_test {
namespace {

TEST(HipPlugin, MemoryKindsAndPointerQuery) {
  const fakehipStats_t before = F().snapshot();
  int type = -1, dev = -2;
  {
    DeviceBuffer d(1000);
    PinnedBuffer pinned(1000);
    EXPECT_GPU_OK(P().pointerQuery(d.p, &type, &dev));
    EXPECT_EQ(type, HETCCL_GPU_MEM_DEVICE);
    EXPECT_EQ(dev, 0);
    EXPECT_GPU_OK(P().pointerQuery(d.as() + 999, &type, &dev));  // inside the allocation
    EXPECT_EQ(type, HETCCL_GPU_MEM_DEVICE);
    EXPECT_GPU_OK(P().pointerQuery(pinned.p, &type, &dev));
    EXPECT_EQ(type, HETCCL_GPU_MEM_PINNED);
    EXPECT_EQ(dev, -1);
    const fakehipStats_t during = F().snapshot();
    EXPECT_EQ(during.liveDeviceAllocs, before.liveDeviceAllocs + 1);
    EXPECT_EQ(during.livePinnedAllocs, before.livePinnedAllocs + 1);
  }
  const fakehipStats_t after = F().snapshot();
  EXPECT_EQ(after.liveDeviceAllocs, before.liveDeviceAllocs) << "freeDevice did not free";
  EXPECT_EQ(after.livePinnedAllocs, before.livePinnedAllocs) << "freePinned did not free";

  std::vector<char> host(4096);
  EXPECT_GPU_OK(P().pointerQuery(host.data(), &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_HOST);
  EXPECT_EQ(dev, -1);
  EXPECT_GPU_OK(P().pointerQuery(nullptr, &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_HOST);
  EXPECT_GPU_OK(P().hostRegister(host.data(), host.size()));
  EXPECT_GPU_OK(P().pointerQuery(host.data() + 100, &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_PINNED);
  expectRuntimeError(P().hostRegister(host.data(), host.size()), "hipHostRegister", "hipErrorHostMemoryAlreadyRegistered");
  EXPECT_GPU_OK(P().hostUnregister(host.data()));
  EXPECT_GPU_OK(P().pointerQuery(host.data(), &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_HOST);
  expectRuntimeError(P().hostUnregister(host.data()), "hipHostUnregister", "hipErrorHostMemoryNotRegistered");

  void* p = nullptr;
  EXPECT_EQ(P().allocDevice(&p, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().allocDevice(nullptr, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().allocPinned(&p, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().allocPinned(nullptr, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().hostRegister(nullptr, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().hostRegister(host.data(), 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().hostUnregister(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().pointerQuery(host.data(), nullptr, &dev), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().freeDevice(nullptr));
  EXPECT_GPU_OK(P().freePinned(nullptr));
  expectRuntimeError(P().freeDevice(host.data()), "hipFree", "hipErrorInvalidValue");
}

TEST(HipPlugin, RegisteredSharedMemorySegment) {
  NoBadAccess noBadAccess;
  // What the multi-process transports do: a MAP_SHARED segment registered as pinned memory, written by a
  // kernel (a flag write) and read by a wait.
  const size_t bytes = 1 << 16;
  void* seg = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(seg, MAP_FAILED);
  ASSERT_GPU_OK(P().hostRegister(seg, bytes));
  void* dev = nullptr;
  EXPECT_GPU_OK(P().devicePointer(seg, &dev));
  EXPECT_EQ(dev, seg);
  Stream s;
  auto* flags = static_cast<uint64_t*>(seg);
  EXPECT_GPU_OK(P().streamWriteFlag(s, flags + 1, 5, HETCCL_GPU_FLAG_FORCE_KERNEL));
  EXPECT_GPU_OK(P().streamWriteFlag(s, flags + 2, 6, 0));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(flags[1], 5u);
  EXPECT_EQ(flags[2], 6u);
  EXPECT_GPU_OK(P().hostUnregister(seg));
  munmap(seg, bytes);
}

TEST(HipPlugin, CopiesAndMemsetsInEveryDirection) {
  NoBadAccess noBadAccess;
  const size_t n = 4099;
  std::vector<unsigned char> host(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7 + 1);
  DeviceBuffer d1(n), d2(n);
  PinnedBuffer pinned(n);
  EXPECT_GPU_OK(P().memcpySync(d1.p, host.data(), n));    // host -> device
  EXPECT_GPU_OK(P().memcpySync(d2.p, d1.p, n));           // device -> device
  EXPECT_GPU_OK(P().memcpySync(pinned.p, d2.p, n));       // device -> pinned
  EXPECT_GPU_OK(P().memcpySync(back.data(), pinned.p, n)); // pinned -> host
  EXPECT_EQ(back, host);
  // memsetSync is complete when it returns (the fake's hipMemset is asynchronous and late).
  EXPECT_GPU_OK(P().memsetSync(pinned.p, 0x3C, n));
  EXPECT_EQ(pinned.as<unsigned char>()[0], 0x3C);
  EXPECT_EQ(pinned.as<unsigned char>()[n - 1], 0x3C);
  EXPECT_GPU_OK(P().memsetSync(d1.p, 0x11, n));
  EXPECT_GPU_OK(P().memcpySync(back.data(), d1.p, n));
  EXPECT_EQ(back[n / 2], 0x11);
  // Asynchronous forms, ordered on the stream, with pageable host memory too.
  Stream s;
  std::vector<unsigned char> pageable(n, 0);
  EXPECT_GPU_OK(P().memsetAsync(d2.p, 0x77, n, s));
  EXPECT_GPU_OK(P().memcpyAsync(pageable.data(), d2.p, n, s));
  EXPECT_GPU_OK(P().memcpyAsync(d1.p, host.data(), n, s));
  EXPECT_GPU_OK(P().memcpyAsync(pinned.p, d1.p, n, s));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(pageable[n - 1], 0x77);
  EXPECT_EQ(std::memcmp(pinned.p, host.data(), n), 0);
  // Zero bytes is a no-op, a null pointer an argument error.
  EXPECT_GPU_OK(P().memcpySync(nullptr, nullptr, 0));
  EXPECT_GPU_OK(P().memsetSync(nullptr, 0, 0));
  EXPECT_GPU_OK(P().memcpyAsync(nullptr, nullptr, 0, s));
  EXPECT_GPU_OK(P().memsetAsync(nullptr, 0, 0, s));
  EXPECT_EQ(P().memcpySync(nullptr, host.data(), 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().memsetSync(nullptr, 0, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().memcpyAsync(d1.p, nullptr, 8, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().memsetAsync(nullptr, 0, 8, s), HETCCL_GPU_ERR_ARGUMENT);
}

TEST(HipPlugin, DevicePointer) {
  DeviceBuffer d(64);
  PinnedBuffer pinned(64);
  std::vector<char> host(256), registered(4096);
  void* out = nullptr;
  EXPECT_GPU_OK(P().devicePointer(d.p, &out));
  EXPECT_EQ(out, d.p);
  EXPECT_GPU_OK(P().devicePointer(pinned.as() + 8, &out));
  EXPECT_EQ(out, pinned.as() + 8);
  ASSERT_GPU_OK(P().hostRegister(registered.data(), registered.size()));
  EXPECT_GPU_OK(P().devicePointer(registered.data() + 16, &out));
  EXPECT_EQ(out, registered.data() + 16);
  EXPECT_GPU_OK(P().hostUnregister(registered.data()));
  EXPECT_EQ(P().devicePointer(host.data(), &out), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().devicePointer(nullptr, &out), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().devicePointer(d.p, nullptr), HETCCL_GPU_ERR_ARGUMENT);
}

}  // namespace
}  // namespace hip_test
