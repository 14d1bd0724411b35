// The plugin's streams, events and flag waits / writes against the fake HIP runtime: ordering, queries,
// argument checks, and stream capture information with relaxed allocation.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "plugin_helpers.hpp"

namespace hip_test {
namespace {

using namespace std::chrono_literals;

TEST(HipPlugin, StreamsQueryAndSynchronize) {
  Stream s;
  PinnedBuffer flag(64);
  EXPECT_GPU_OK(P().streamQuery(s));
  EXPECT_GPU_OK(P().streamWaitFlag(s, flag.as<uint64_t>(), 1, 0));
  EXPECT_EQ(P().streamQuery(s), HETCCL_GPU_ERR_NOT_READY);
  *word(flag.p) = 1;
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_GPU_OK(P().streamQuery(s));
  // The null stream is the runtime's default stream.
  EXPECT_GPU_OK(P().streamQuery(nullptr));
  EXPECT_GPU_OK(P().streamSynchronize(nullptr));
  EXPECT_EQ(P().streamCreate(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().streamDestroy(nullptr));
}

TEST(HipPlugin, EventsOrderStreams) {
  NoBadAccess noBadAccess;
  Stream a, b;
  PinnedBuffer flag(64), out(64);
  DeviceBuffer src(64);
  EXPECT_GPU_OK(P().memsetSync(src.p, 0x5A, 64));
  void* e = nullptr;
  ASSERT_GPU_OK(P().eventCreate(&e));
  EXPECT_GPU_OK(P().eventQuery(e));  // never recorded: reached
  EXPECT_GPU_OK(P().streamWaitFlag(a, flag.as<uint64_t>(), 1, 0));
  EXPECT_GPU_OK(P().eventRecord(e, a));
  EXPECT_EQ(P().eventQuery(e), HETCCL_GPU_ERR_NOT_READY);
  EXPECT_GPU_OK(P().streamWaitEvent(b, e));
  EXPECT_GPU_OK(P().memcpyAsync(out.p, src.p, 64, b));  // b waits for a's event
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(out.as<unsigned char>()[0], 0) << "streamWaitEvent did not hold the other stream";
  EXPECT_EQ(P().streamQuery(b), HETCCL_GPU_ERR_NOT_READY);
  *word(flag.p) = 1;
  EXPECT_GPU_OK(P().eventSynchronize(e));
  EXPECT_GPU_OK(P().eventQuery(e));
  EXPECT_GPU_OK(P().streamSynchronize(b));
  EXPECT_EQ(out.as<unsigned char>()[63], 0x5A);
  EXPECT_GPU_OK(P().eventDestroy(e));
  EXPECT_EQ(P().eventCreate(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().eventRecord(nullptr, a), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().eventQuery(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().eventSynchronize(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamWaitEvent(a, nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().eventDestroy(nullptr));
}

// A wait really holds later work: a copy queued after streamWaitFlag must not happen before the host
// writes the flag (the test fails if the plugin drops or misplaces the wait).
void checkWaitOrdering(unsigned flags, bool expectNative) {
  NoBadAccess noBadAccess;
  const fakehipStats_t before = F().snapshot();
  Stream s;
  PinnedBuffer flag(64), out(64), written(64);
  DeviceBuffer src(64);
  EXPECT_GPU_OK(P().memsetSync(src.p, 0x42, 64));
  EXPECT_GPU_OK(P().streamWaitFlag(s, flag.as<uint64_t>(), 3, flags));
  EXPECT_GPU_OK(P().memcpyAsync(out.p, src.p, 64, s));
  EXPECT_GPU_OK(P().streamWriteFlag(s, written.as<uint64_t>(), 9, flags));
  *word(flag.p) = 2;  // below the value: still waiting
  std::this_thread::sleep_for(40ms);
  EXPECT_EQ(out.as<unsigned char>()[0], 0) << "work after streamWaitFlag ran before the flag reached its value";
  EXPECT_EQ(*word(written.p), 0u) << "streamWriteFlag fired before the earlier wait was satisfied";
  EXPECT_EQ(P().streamQuery(s), HETCCL_GPU_ERR_NOT_READY);
  *word(flag.p) = 3;
  EXPECT_TRUE(eventually(5000, [&] { return *word(written.p) == 9; })) << "the stream never went on";
  EXPECT_EQ(out.as<unsigned char>()[63], 0x42) << "the flag write became visible before the earlier copy";
  EXPECT_GPU_OK(P().streamSynchronize(s));
  const fakehipStats_t after = F().snapshot();
  if (expectNative) {
    EXPECT_EQ(after.waitValueOps, before.waitValueOps + 1);
    EXPECT_EQ(after.writeValueOps, before.writeValueOps + 1);
  } else {
    EXPECT_EQ(after.waitValueOps, before.waitValueOps) << "FORCE_KERNEL used a stream memory operation";
    EXPECT_GE(after.launches, before.launches + 2);
  }
  // The wait condition is (int64)(*flag - value) >= 0: a larger value also releases it.
  *word(flag.p) = 100;
  EXPECT_GPU_OK(P().streamWaitFlag(s, flag.as<uint64_t>(), 50, flags));
  EXPECT_GPU_OK(P().streamSynchronize(s));
}

TEST(HipPlugin, WaitFlagBlocksLaterWorkNative) {
  int native = -1;
  EXPECT_GPU_OK(P().flagMethod(&native));
  EXPECT_EQ(native, 1);
  EXPECT_EQ(P().flagMethod(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  checkWaitOrdering(0, true);
}

TEST(HipPlugin, WaitFlagBlocksLaterWorkForcedKernel) { checkWaitOrdering(HETCCL_GPU_FLAG_FORCE_KERNEL, false); }

TEST(HipPlugin, FlagArgumentsAreChecked) {
  NoBadAccess noBadAccess;
  Stream s;
  PinnedBuffer flag(64);
  std::vector<uint64_t> pageable(4);
  EXPECT_EQ(P().streamWaitFlag(s, nullptr, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamWriteFlag(s, nullptr, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  auto* misaligned = reinterpret_cast<uint64_t*>(flag.as() + 4);
  EXPECT_EQ(P().streamWaitFlag(s, misaligned, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamWriteFlag(s, misaligned, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  // Not pinned: the device cannot see it.
  EXPECT_NE(P().streamWriteFlag(s, pageable.data(), 1, 0), HETCCL_GPU_OK);
  EXPECT_GPU_OK(P().streamSynchronize(s));
}

// ---------------------------------------------------------------------------------------------------
TEST(HipPlugin, StreamCaptureInfoAndRelaxedAllocation) {
  NoBadAccess noBadAccess;
  Stream s;
  int capturing = -1;
  uint64_t id = 1;
  EXPECT_GPU_OK(P().streamCaptureInfo(s, &capturing, &id));
  EXPECT_EQ(capturing, 0);
  EXPECT_EQ(id, 0u);
  EXPECT_GPU_OK(P().streamCaptureInfo(nullptr, &capturing, &id));
  EXPECT_EQ(capturing, 0);
  EXPECT_EQ(P().streamCaptureInfo(s, nullptr, &id), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamCaptureInfo(s, &capturing, nullptr), HETCCL_GPU_ERR_ARGUMENT);
  ASSERT_EQ(F().setCapturing(s, 1, 4242, 0 /* global mode */), 0);
  EXPECT_GPU_OK(P().streamCaptureInfo(s, &capturing, &id));
  EXPECT_EQ(capturing, 1);
  EXPECT_EQ(id, 4242u);
  // Allocation, free, stream and event creation stay legal during a global-mode capture.
  const uint64_t violations = F().snapshot().relaxedViolations;
  void *d = nullptr, *h = nullptr, *s2 = nullptr, *e = nullptr;
  EXPECT_GPU_OK(P().allocDevice(&d, 64));
  EXPECT_GPU_OK(P().allocPinned(&h, 64));
  EXPECT_GPU_OK(P().streamCreate(&s2));
  EXPECT_GPU_OK(P().eventCreate(&e));
  EXPECT_GPU_OK(P().freeDevice(d));
  EXPECT_GPU_OK(P().freePinned(h));
  EXPECT_GPU_OK(P().streamDestroy(s2));
  EXPECT_GPU_OK(P().eventDestroy(e));
  EXPECT_EQ(F().snapshot().relaxedViolations, violations) << "an allocation ran in the global capture mode";
  ASSERT_EQ(F().setCapturing(s, 0, 0, 0), 0);
  EXPECT_GPU_OK(P().streamCaptureInfo(s, &capturing, &id));
  EXPECT_EQ(capturing, 0);
}

}  // namespace
}  // namespace hip_test
