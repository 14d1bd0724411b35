// The plugin's streamOps (v2) against the fake HIP runtime: every kind (WAIT_GEQ, WAIT_EQ, WRITE,
// STAMP_CHECK), natively and through the kernel, on pinned and device memory words; argument checks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "harness.hpp"
#include "plugin_helpers.hpp"

namespace hip_test {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------------
// streamOps (v2).

hetcclGpuStreamOp_t op(uint32_t kind, uint64_t* w, uint64_t value, uint32_t flags = 0) {
  hetcclGpuStreamOp_t o{};
  o.kind = kind;
  o.flags = flags;
  o.word = w;
  o.value = value;
  return o;
}

void checkStreamOps(uint32_t flags) {
  NoBadAccess noBadAccess;
  Stream s;
  PinnedBuffer words(256), out(64);
  DeviceBuffer src(64);
  EXPECT_GPU_OK(P().memsetSync(src.p, 0x24, 64));
  auto* w = words.as<uint64_t>();
  // WAIT_GEQ then WAIT_EQ then WRITE, in one call; then a copy that must wait for all of it.
  const hetcclGpuStreamOp_t batch[] = {op(HETCCL_GPU_OP_WAIT_GEQ, w + 0, 5, flags),
                                       op(HETCCL_GPU_OP_WAIT_EQ, w + 1, 7, flags),
                                       op(HETCCL_GPU_OP_WRITE, w + 2, 11, flags)};
  ASSERT_GPU_OK(P().streamOps(s, batch, 3));
  ASSERT_GPU_OK(P().memcpyAsync(out.p, src.p, 64, s));
  *word(w, 0) = 6;  // GEQ satisfied
  *word(w, 1) = 8;  // EQ not (8 != 7)
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(*word(w, 2), 0u) << "WRITE ran before WAIT_EQ was satisfied";
  EXPECT_EQ(out.as<unsigned char>()[0], 0);
  *word(w, 1) = 7;
  EXPECT_TRUE(eventually(5000, [&] { return *word(w, 2) == 11; }));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(out.as<unsigned char>()[0], 0x24);
  // STAMP_CHECK: a match leaves the report alone; a mismatch records what was found and expected once.
  uint64_t* stamp = w + 8;
  uint64_t* report = w + 16;
  for (int i = 0; i < 4; ++i) stamp[i] = 100 + i;
  hetcclGpuStreamOp_t check{};
  check.kind = HETCCL_GPU_OP_STAMP_CHECK;
  check.flags = flags;
  check.word = stamp;
  check.report = report;
  for (int i = 0; i < 4; ++i) check.expect[i] = 100 + i;
  ASSERT_GPU_OK(P().streamOps(s, &check, 1));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(report[0], 0u) << "STAMP_CHECK reported a matching stamp";
  check.expect[2] = 999;
  hetcclGpuStreamOp_t checkAgain = check;
  checkAgain.expect[0] = 555;  // a second mismatch must not overwrite the first report
  const hetcclGpuStreamOp_t two[] = {check, checkAgain};
  ASSERT_GPU_OK(P().streamOps(s, two, 2));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(report[0], 1u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(report[1 + i], 100u + i) << "found word " << i;
    EXPECT_EQ(report[5 + i], check.expect[i]) << "expected word " << i;
  }
  // The maximum batch of mixed operations.
  hetcclGpuStreamOp_t eight[HETCCL_GPU_MAX_STREAM_OPS];
  for (unsigned i = 0; i < HETCCL_GPU_MAX_STREAM_OPS; ++i)
    eight[i] = i % 2 ? op(HETCCL_GPU_OP_WAIT_GEQ, w + 24, i, flags) : op(HETCCL_GPU_OP_WRITE, w + 24, i + 1, flags);
  ASSERT_GPU_OK(P().streamOps(s, eight, HETCCL_GPU_MAX_STREAM_OPS));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(*word(w, 24), 7u);
}

TEST(HipPlugin, StreamOpsEveryKind) {
  const fakehipStats_t before = F().snapshot();
  checkStreamOps(0);
  const fakehipStats_t after = F().snapshot();
  EXPECT_GT(after.waitValueOps, before.waitValueOps) << "waits did not use hipStreamWaitValue64 where supported";
  EXPECT_GT(after.launches, before.launches) << "STAMP_CHECK runs in the kernel";
  EXPECT_EQ(after.badAccesses, before.badAccesses) << F().lastBadAccess();
}

TEST(HipPlugin, StreamOpsOnDeviceMemoryWords) {
  NoBadAccess noBadAccess;
  // Words may be device memory too (gpu_plugin.h): written and waited on by the stream, read back by a copy.
  Stream s;
  DeviceBuffer words(64);
  PinnedBuffer out(64);
  for (uint32_t flags : {0u, HETCCL_GPU_FLAG_FORCE_KERNEL}) {
    EXPECT_GPU_OK(P().memsetSync(words.p, 0, 64));
    auto* w = words.as<uint64_t>();
    const hetcclGpuStreamOp_t ops[] = {op(HETCCL_GPU_OP_WRITE, w, 41, flags), op(HETCCL_GPU_OP_WAIT_EQ, w, 41, flags),
                                       op(HETCCL_GPU_OP_WRITE, w + 1, 42, flags)};
    ASSERT_GPU_OK(P().streamOps(s, ops, 3));
    EXPECT_GPU_OK(P().memcpyAsync(out.p, words.p, 16, s));
    EXPECT_GPU_OK(P().streamSynchronize(s));
    EXPECT_EQ(out.as<uint64_t>()[0], 41u);
    EXPECT_EQ(out.as<uint64_t>()[1], 42u);
  }
}

TEST(HipPlugin, StreamOpsForcedKernel) {
  const fakehipStats_t before = F().snapshot();
  checkStreamOps(HETCCL_GPU_FLAG_FORCE_KERNEL);
  const fakehipStats_t after = F().snapshot();
  EXPECT_EQ(after.waitValueOps, before.waitValueOps);
  EXPECT_EQ(after.writeValueOps, before.writeValueOps);
}

TEST(HipPlugin, StreamOpsArgumentsAreChecked) {
  NoBadAccess noBadAccess;
  Stream s;
  PinnedBuffer words(128);
  auto* w = words.as<uint64_t>();
  hetcclGpuStreamOp_t ok = op(HETCCL_GPU_OP_WRITE, w, 1);
  hetcclGpuStreamOp_t many[HETCCL_GPU_MAX_STREAM_OPS + 1];
  for (auto& m : many) m = ok;
  EXPECT_EQ(P().streamOps(s, nullptr, 1), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamOps(s, &ok, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamOps(s, many, HETCCL_GPU_MAX_STREAM_OPS + 1), HETCCL_GPU_ERR_ARGUMENT);
  hetcclGpuStreamOp_t bad = ok;
  bad.kind = 0;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad.kind = 5;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad = ok;
  bad.word = nullptr;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad.word = reinterpret_cast<uint64_t*>(words.as() + 4);
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad = ok;
  bad.kind = HETCCL_GPU_OP_STAMP_CHECK;
  bad.report = nullptr;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  const hetcclGpuStreamOp_t mixed[] = {ok, bad};  // nothing of a rejected call is queued
  EXPECT_EQ(P().streamOps(s, mixed, 2), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(w[0], 0u) << "a rejected streamOps call queued some of its operations";
}

}  // namespace
}  // namespace hip_test
