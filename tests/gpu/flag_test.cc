// Stream <-> host synchronisation: a stream waiting for a host-written flag (driver stream memory
// operations and the polling-kernel fallback), a stream writing a flag the host polls, and events.
#include <atomic>
#include <cstdint>
#include <vector>

#include "gpu_fixture.hpp"

namespace hetccl::device::test {
namespace {

uint64_t loadFlag(const uint64_t* flag) { return std::atomic_ref<const uint64_t>(*flag).load(std::memory_order_acquire); }
void storeFlag(uint64_t* flag, uint64_t v) { std::atomic_ref<uint64_t>(*flag).store(v, std::memory_order_release); }

class GpuFlagTest : public GpuTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool forceKernel() const { return GetParam(); }
  // Skips the test (fails it under HETCCL_TEST_REQUIRE_GPU=1); the test returns right after.
  void skipWithoutNativeFlags() {
    if (hetccl::test::gpuRequired())
      FAIL() << "HETCCL_TEST_REQUIRE_GPU=1 but the device has no 64-bit stream memory operations";
    GTEST_SKIP() << "device has no 64-bit stream memory operations";
  }
};

// A copy queued after the wait does not happen until the host writes the flag, then it does; a flag
// written by the stream after the copy tells the host, without a syscall, that the data is there.
TEST_P(GpuFlagTest, StreamWaitsForHostFlagThenCopiesAndSignals) {
  if (!forceKernel() && !rt_->nativeFlagOps()) return skipWithoutNativeFlags();
  const size_t bytes = 1 << 16;
  GpuBuffer flags(*rt_, 64, GpuBuffer::Where::Pinned);
  auto* go = reinterpret_cast<uint64_t*>(flags.bytes());
  auto* done = reinterpret_cast<uint64_t*>(flags.bytes() + 8);
  storeFlag(go, 41);
  storeFlag(done, 0);
  GpuBuffer source(*rt_, bytes, GpuBuffer::Where::Device), target(*rt_, bytes, GpuBuffer::Where::Pinned);
  rt_->fill(source.get(), 0x77, bytes);
  std::memset(target.get(), 0, bytes);

  rt_->streamWaitFlag(stream_, go, 42, forceKernel());
  rt_->copyAsync(target.get(), source.get(), bytes, stream_);
  rt_->streamWriteFlag(stream_, done, 7, forceKernel());

  // Not a timing assertion: whatever the delay, nothing may run before the flag reaches 42.
  GpuBuffer otherSource(*rt_, 4096, GpuBuffer::Where::Device);
  GpuRuntime::Stream other = rt_->createStream();
  for (int i = 0; i < 50; ++i) {  // give a broken wait every chance to let the copy through
    rt_->copyAsync(flags.bytes() + 32, otherSource.get(), 8, other);
    rt_->synchronize(other);
  }
  rt_->destroyStream(other);
  const bool idleEarly = rt_->isIdle(stream_);
  const bool copiedEarly = target.bytes()[0] != 0 || target.bytes()[bytes - 1] != 0;
  const uint64_t doneEarly = loadFlag(done);

  storeFlag(go, 42);  // release the stream before any assertion can end the test
  const bool signalled = pollFor([&] { return loadFlag(done) == 7; });
  rt_->synchronize(stream_);

  EXPECT_FALSE(idleEarly) << "the stream ran past an unreached flag wait";
  EXPECT_FALSE(copiedEarly) << "the copy ran before the host wrote the flag";
  EXPECT_EQ(doneEarly, 0u);
  ASSERT_TRUE(signalled) << "the stream never wrote its flag";
  EXPECT_EQ(target.bytes()[0], 0x77);
  EXPECT_EQ(target.bytes()[bytes - 1], 0x77);
}

// A counter that is already past the value does not block (wait is "reached or passed").
TEST_P(GpuFlagTest, WaitOnAReachedValueDoesNotBlock) {
  if (!forceKernel() && !rt_->nativeFlagOps()) return skipWithoutNativeFlags();
  GpuBuffer flags(*rt_, 64, GpuBuffer::Where::Pinned);
  auto* go = reinterpret_cast<uint64_t*>(flags.bytes());
  storeFlag(go, 100);
  rt_->streamWaitFlag(stream_, go, 99, forceKernel());
  rt_->streamWaitFlag(stream_, go, 100, forceKernel());
  EXPECT_TRUE(pollFor([&] { return rt_->isIdle(stream_); }));
}

INSTANTIATE_TEST_SUITE_P(Methods, GpuFlagTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "PollingKernel" : "StreamMemOps"; });

class GpuEventTest : public GpuTest {};

// Events follow the stream; another stream waiting on the event does not copy before it is reached.
TEST_F(GpuEventTest, EventsOrderStreamsWithoutBlockingTheHost) {
  GpuBuffer flags(*rt_, 64, GpuBuffer::Where::Pinned);
  auto* go = reinterpret_cast<uint64_t*>(flags.bytes());
  storeFlag(go, 0);
  const size_t bytes = 4096;
  GpuBuffer source(*rt_, bytes, GpuBuffer::Where::Device), target(*rt_, bytes, GpuBuffer::Where::Pinned);
  rt_->fill(source.get(), 0x3c, bytes);
  std::memset(target.get(), 0, bytes);

  GpuRuntime::Event event = rt_->createEvent();
  GpuRuntime::Stream second = rt_->createStream();
  rt_->streamWaitFlag(stream_, go, 1, /*forceKernel=*/true);
  rt_->record(event, stream_);
  rt_->streamWait(second, event);
  rt_->copyAsync(target.get(), source.get(), bytes, second);

  const bool reachedEarly = rt_->isReached(event);
  const bool secondIdleEarly = rt_->isIdle(second);
  storeFlag(go, 1);
  rt_->waitEvent(event);
  const bool reachedAfter = rt_->isReached(event);
  rt_->synchronize(second);

  EXPECT_FALSE(reachedEarly);
  EXPECT_FALSE(secondIdleEarly);
  EXPECT_TRUE(reachedAfter);
  EXPECT_EQ(target.bytes()[0], 0x3c);
  EXPECT_EQ(target.bytes()[bytes - 1], 0x3c);
  rt_->destroyStream(second);
  rt_->destroyEvent(event);
}

TEST_F(GpuEventTest, UnpinnedFlagIsRejected) {
  std::vector<uint64_t> plain(4);
  EXPECT_THROW(rt_->streamWaitFlag(stream_, plain.data(), 1), Error);
  EXPECT_THROW(rt_->streamWaitFlag(stream_, reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(plain.data()) + 1), 1),
               InvalidArgument);
}

}  // namespace
}  // namespace hetccl::device::test
