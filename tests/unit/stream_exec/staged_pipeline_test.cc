// The staged device path (src/exec/staged/device_path.hpp) pipelining a group's pieces on the simulated GPU
// (sim_gpu.hpp, adversarial stream order): calls cut into many pieces through few staging slots, back to
// back on two user streams that share the path's staging, inputs written and outputs read on the user's
// stream, nothing drained between calls. The host engine is modelled by a runner that sums the group over
// three identical ranks (out = 3 * in, exact in int32) then takes a random while. A piece copied in late or out
// early, a slot reused before its outputs were copied back, or a call starting before the previous call
// on the other stream was copied out, gives wrong elements; pieces handed to the progress thread only
// after their stream operations were queued deadlock on a runtime whose full stream queue blocks launches.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_harness.hpp"
#include "exec/staged/device_path.hpp"
#include "sim_gpu.hpp"
#include "stream_test_support.hpp"

namespace hetccl {
namespace {

using bootstrap::testing::ScopedEnv;

constexpr int kRanks = 3;  // the runner's model: every rank holds the same input

/// The host engine's stand-in: an all-reduce / reduce / broadcast of kRanks identical inputs, in host
/// memory, then a random delay (so the streams run ahead of it or wait for it).
struct Runner {
  std::atomic<int> pieces{0};
  std::mt19937 rng{std::random_device{}()};
  void operator()(std::span<const algo::CollOp> ops) {
    // Read at once (a piece handed over before its inputs landed reads stale slot bytes), then take a
    // while (the streams run ahead up to the slots' limit).
    for (const algo::CollOp& op : ops) {
      auto* out = static_cast<int32_t*>(op.recvbuff);
      const auto* in = static_cast<const int32_t*>(op.sendbuff);
      const int32_t factor = op.kind == algo::CollKind::Broadcast ? 1 : kRanks;
      for (size_t i = 0; i < op.count; ++i) out[i] = in[i] * factor;
    }
    ++pieces;
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
  }
};

int32_t inputOf(int call, size_t i) { return static_cast<int32_t>((i * 7 + call * 13) % 1001) - 500; }

struct Stream {
  void* stream = nullptr;
  std::vector<int32_t> send, recv;
};

/// `calls` calls of `kind` with `count` int32 each, alternating between two user streams (each with its
/// own buffers); every call's inputs are written and its outputs read back on its stream. Returns the
/// first wrong element, or "".
std::string runCalls(algo::CollKind kind, size_t count, int calls, bool inPlace, Runner& runner) {
  const auto& gpu = test::sim::plugin();
  std::atomic<bool> aborted{false};
  std::string failure;
  DevicePath path(
      gpu, 0, 0, 1, [&](std::span<const algo::CollOp> ops) { runner(ops); },
      [&](const std::exception& e) { failure = e.what(); }, &aborted);
  Stream s[2];
  std::vector<std::vector<int32_t>> in(calls, std::vector<int32_t>(count)), out(calls, std::vector<int32_t>(count, -7777));
  for (auto& st : s) {
    gpu.streamCreate(&st.stream);
    st.send.assign(count, 0);
    st.recv.assign(count, 0);
  }
  const size_t bytes = count * sizeof(int32_t);
  for (int c = 0; c < calls; ++c) {
    for (size_t i = 0; i < count; ++i) in[c][i] = inputOf(c, i);
    Stream& st = s[c % 2];
    void* input = inPlace ? st.recv.data() : st.send.data();
    gpu.memcpyAsync(input, in[c].data(), bytes, st.stream);
    algo::CollOp op;
    op.kind = kind;
    op.sendbuff = input;
    op.recvbuff = st.recv.data();
    op.count = count;
    op.type = DataType::Int32;
    path.enqueue({op}, st.stream);
    gpu.memcpyAsync(out[c].data(), st.recv.data(), bytes, st.stream);
  }
  path.drain();
  for (auto& st : s) gpu.streamSynchronize(st.stream);
  test::sim::waitIdle(std::chrono::seconds(30));
  for (auto& st : s) gpu.streamDestroy(st.stream);
  if (!failure.empty()) return failure;
  const int32_t factor = kind == algo::CollKind::Broadcast ? 1 : kRanks;
  for (int c = 0; c < calls; ++c)
    for (size_t i = 0; i < count; ++i)
      if (out[c][i] != in[c][i] * factor)
        return "call " + std::to_string(c) + " element " + std::to_string(i) + ": " + std::to_string(out[c][i]) +
               " instead of " + std::to_string(in[c][i] * factor) + " (sim seed " + std::to_string(test::sim::seed()) + ")";
  return "";
}

class StagedPipelineTest : public ::testing::Test {
 protected:
  ScopedEnv timeout_{"HETCCL_TIMEOUT", test::stallSeconds()};  // a stall fails the test instead of hanging it
  ScopedEnv piece_{"HETCCL_STAGED_PIECE_BYTES", "4096"};  // 1024 int32 per piece
  ScopedEnv slots_{"HETCCL_STAGED_SLOTS", "3"};
};

constexpr size_t kCount = 1024 * 23 + 5;  // 24 pieces, the last one 5 elements

TEST_F(StagedPipelineTest, OutOfPlaceAllReduceThroughManyPiecesOnTwoStreams) {
  Runner runner;
  EXPECT_EQ(runCalls(algo::CollKind::AllReduce, kCount, 8, false, runner), "");
  EXPECT_EQ(runner.pieces.load(), 8 * 24);
}

TEST_F(StagedPipelineTest, InPlaceAllReduceThroughManyPiecesOnTwoStreams) {
  Runner runner;
  EXPECT_EQ(runCalls(algo::CollKind::AllReduce, kCount, 8, true, runner), "");
}

TEST_F(StagedPipelineTest, ReduceAndBroadcastThroughManyPieces) {
  Runner runner;
  EXPECT_EQ(runCalls(algo::CollKind::Reduce, kCount, 6, false, runner), "");
  EXPECT_EQ(runCalls(algo::CollKind::Broadcast, kCount, 6, false, runner), "");
}

TEST_F(StagedPipelineTest, MorePiecesInFlightThanSlotsWithTwoSlots) {
  ScopedEnv slots{"HETCCL_STAGED_SLOTS", "2"};
  Runner runner;
  EXPECT_EQ(runCalls(algo::CollKind::AllReduce, kCount, 8, false, runner), "");
}

// A real runtime blocks a launch into a full stream queue until the stream moves on; the stream moves on
// only once the progress thread ran the pieces it waits for, so those must be handed over before their
// stream operations are queued (else: deadlock, here an error after 10 s).
TEST_F(StagedPipelineTest, ALaunchBlockedOnAFullStreamQueueDoesNotDeadlock) {
  struct Limit {
    Limit() { test::sim::setStreamQueueLimit(6); }
    ~Limit() { test::sim::setStreamQueueLimit(0); }
  } limit;
  Runner runner;
  EXPECT_EQ(runCalls(algo::CollKind::AllReduce, kCount, 4, false, runner), "");
}

TEST_F(StagedPipelineTest, PieceBytesZeroStagesEachCallWhole) {
  ScopedEnv whole{"HETCCL_STAGED_PIECE_BYTES", "0"};
  Runner runner;
  EXPECT_EQ(runCalls(algo::CollKind::AllReduce, kCount, 6, false, runner), "");
  EXPECT_EQ(runner.pieces.load(), 6);
}

}  // namespace
}  // namespace hetccl
