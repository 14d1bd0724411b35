// The plugin's stream operations (gpu_plugin.h, HETCCL_GPU_OP_*), on both methods (stream memory
// operations and the kernel): waits hold back later work until the host writes the word, writes tell the
// host, and a call-stamp check records the first mismatch (found and expected) without waiting.
#include <atomic>
#include <cstdint>

#include "gpu_fixture.hpp"

namespace hetccl::device::test {
namespace {

uint64_t loadWord(const uint64_t* w) { return std::atomic_ref<const uint64_t>(*w).load(std::memory_order_acquire); }
void storeWord(uint64_t* w, uint64_t v) { std::atomic_ref<uint64_t>(*w).store(v, std::memory_order_release); }

/// True when `done` becomes true within `limit` (a broken wait gets that long to let work through).
template <typename Done>
bool becomesTrueWithin(Done&& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until)
    if (done()) return true;
  return done();
}

class GpuStreamOpsTest : public GpuTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool forceKernel() const { return GetParam(); }
  void* dev(void* host) {
    void* d = nullptr;
    EXPECT_EQ(rt_->plugin().devicePointer(host, &d), HETCCL_GPU_OK) << rt_->plugin().lastError();
    return d;
  }
  hetcclGpuStreamOp_t op(uint32_t kind, uint64_t* hostWord, uint64_t value) {
    hetcclGpuStreamOp_t o{};
    o.kind = kind;
    o.flags = forceKernel() ? HETCCL_GPU_FLAG_FORCE_KERNEL : 0;
    o.word = static_cast<uint64_t*>(dev(hostWord));
    o.value = value;
    return o;
  }
  void queue(std::initializer_list<hetcclGpuStreamOp_t> ops) {
    ASSERT_EQ(rt_->plugin().streamOps(stream_, ops.begin(), static_cast<unsigned>(ops.size())), HETCCL_GPU_OK)
        << rt_->plugin().lastError();
  }
};

// A copy between an equal-wait and a write runs only once the host wrote the awaited value (not a
// smaller or larger one), then the stream writes its word; an at-least wait passes on a larger value.
TEST_P(GpuStreamOpsTest, WaitsHoldLaterWorkUntilTheHostWritesTheValue) {
  if (!forceKernel() && !rt_->nativeFlagOps()) GTEST_SKIP() << "device has no 64-bit stream memory operations";
  GpuBuffer words(*rt_, 256, GpuBuffer::Where::Pinned);
  auto* state = reinterpret_cast<uint64_t*>(words.bytes());
  auto* count = reinterpret_cast<uint64_t*>(words.bytes() + 64);
  auto* done = reinterpret_cast<uint64_t*>(words.bytes() + 128);
  storeWord(state, 0);
  storeWord(count, 5);
  storeWord(done, 0);
  const size_t bytes = 1 << 16;
  GpuBuffer source(*rt_, bytes, GpuBuffer::Where::Device), target(*rt_, bytes, GpuBuffer::Where::Pinned);
  rt_->fill(source.get(), 0x5a, bytes);
  std::memset(target.get(), 0, bytes);

  queue({op(HETCCL_GPU_OP_WAIT_EQ, state, 1), op(HETCCL_GPU_OP_WAIT_GEQ, count, 7)});
  rt_->copyAsync(target.get(), source.get(), bytes, stream_);
  queue({op(HETCCL_GPU_OP_WRITE, done, 9)});

  storeWord(state, 2);  // not equal: still waiting
  storeWord(count, 8);  // at least: this one passes
  const bool releasedEarly = becomesTrueWithin([&] { return loadWord(done) != 0; }, std::chrono::milliseconds(200));
  const bool copiedEarly = target.bytes()[0] != 0;
  storeWord(state, 1);
  const bool signalled = pollFor([&] { return loadWord(done) == 9; });
  rt_->synchronize(stream_);

  EXPECT_FALSE(releasedEarly) << "the equal-wait passed on another value";
  EXPECT_FALSE(copiedEarly);
  ASSERT_TRUE(signalled) << "the stream never wrote its word";
  EXPECT_EQ(target.bytes()[0], 0x5a);
  EXPECT_EQ(target.bytes()[bytes - 1], 0x5a);
}

// A matching stamp leaves the report alone; the first mismatch is recorded (found, expected) and a later
// one does not overwrite it; the stream never waits on a check.
TEST_P(GpuStreamOpsTest, StampCheckRecordsTheFirstMismatch) {
  GpuBuffer words(*rt_, 256, GpuBuffer::Where::Pinned);
  auto* header = reinterpret_cast<uint64_t*>(words.bytes());
  auto* report = reinterpret_cast<uint64_t*>(words.bytes() + 64);
  for (int w = 0; w < 4; ++w) storeWord(header + w, 10 + w);
  for (int w = 0; w < HETCCL_GPU_REPORT_WORDS; ++w) storeWord(report + w, 0);
  auto check = [&](uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    hetcclGpuStreamOp_t o = op(HETCCL_GPU_OP_STAMP_CHECK, header, 0);
    o.expect[0] = a;
    o.expect[1] = b;
    o.expect[2] = c;
    o.expect[3] = d;
    o.report = static_cast<uint64_t*>(dev(report));
    return o;
  };
  queue({check(10, 11, 12, 13)});
  rt_->synchronize(stream_);
  EXPECT_EQ(loadWord(report), 0u) << "a matching stamp was reported";
  queue({check(10, 11, 99, 13), check(1, 2, 3, 4)});
  rt_->synchronize(stream_);
  ASSERT_EQ(loadWord(report), 1u);
  const uint64_t want[8] = {10, 11, 12, 13, 10, 11, 99, 13};
  for (int w = 0; w < 8; ++w) EXPECT_EQ(loadWord(report + 1 + w), want[w]) << "report word " << 1 + w;
}

TEST_P(GpuStreamOpsTest, MalformedOperationsAreRefusedNamingTheCall) {
  GpuBuffer words(*rt_, 64, GpuBuffer::Where::Pinned);
  hetcclGpuStreamOp_t bad = op(HETCCL_GPU_OP_STAMP_CHECK, reinterpret_cast<uint64_t*>(words.bytes()), 0);  // no report
  EXPECT_EQ(rt_->plugin().streamOps(stream_, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_NE(std::string(rt_->plugin().lastError()).find("streamOps"), std::string::npos);
  bad.kind = 77;
  EXPECT_EQ(rt_->plugin().streamOps(stream_, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(rt_->plugin().streamOps(stream_, &bad, 0), HETCCL_GPU_ERR_ARGUMENT);
}

INSTANTIATE_TEST_SUITE_P(Methods, GpuStreamOpsTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Kernel" : "StreamMemOps"; });

}  // namespace
}  // namespace hetccl::device::test
