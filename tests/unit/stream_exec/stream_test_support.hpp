// What the stream pipeline's tests share: the settings that make small rings (every message wraps the
// ring many times: flow control), every collective kind a case runs, and a bounded wait.
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "bootstrap_harness.hpp"
#include "sim_world.hpp"
#include "unit/algo/collective_case.hpp"

namespace hetccl::test {

/// HETCCL_TIMEOUT for the tests whose stalls must fail rather than hang: 30 s, or HETCCL_TEST_STALL_SECONDS
/// (scripts/mutate-stream-waits.sh sets 5 for its mutants, most of which are caught by a stall).
inline const char* stallSeconds() {
  const char* s = std::getenv("HETCCL_TEST_STALL_SECONDS");
  return s && *s ? s : "30";
}

/// Rings of 64 KiB slots (`slots` of them), small messages up to 4 KiB, HETCCL_TIMEOUT stallSeconds() so
/// that a stall fails the test instead of hanging it, and no latency path (these tests are the stream pipeline's,
/// small all-reduces included; latency_path_test.cc turns it on).
class SmallRingTest : public ::testing::Test {
 protected:
  explicit SmallRingTest(const char* slots = "2") : slots_{"HETCCL_GPU_SLOTS", slots} {}

 private:
  bootstrap::testing::ScopedEnv timeout_{"HETCCL_TIMEOUT", stallSeconds()};
  bootstrap::testing::ScopedEnv chunk_{"HETCCL_GPU_CHUNK_BYTES", "65536"};
  bootstrap::testing::ScopedEnv slots_;
  bootstrap::testing::ScopedEnv small_{"HETCCL_SMALL_BYTES", "4096"};
  bootstrap::testing::ScopedEnv noLatencyPath_{"HETCCL_GPU_LL_BYTES", "0"};
};

/// Every collective kind of a CollCase, point-to-point (a ring of sends and receives) included.
inline constexpr algo::CollKind kEveryKind[] = {algo::CollKind::AllReduce,     algo::CollKind::Broadcast,
                                                algo::CollKind::Reduce,        algo::CollKind::AllGather,
                                                algo::CollKind::ReduceScatter, algo::CollKind::AllToAll,
                                                algo::CollKind::AllToAllv,     kSendRecvRing};

/// Runs every collective kind on `world`: 5 int8 elements (max) and 40,001 float32 ones (sum), out of place
/// and in place, the last rank as root; every case must be exact.
inline void expectEveryKindExact(SimWorld& world) {
  for (algo::CollKind kind : kEveryKind)
    for (size_t count : {size_t{5}, size_t{40'001}})
      for (bool inPlace : {false, true}) {
        CollCase c;
        c.kind = kind;
        c.count = count;
        c.type = count == 5 ? DataType::Int8 : DataType::Float32;
        c.op = count == 5 ? RedOpKind::Max : RedOpKind::Sum;
        c.inPlace = inPlace;
        c.root = world.size() - 1;
        c.layout = world.layout();
        EXPECT_EQ(world.run(c), "") << c.describe();
      }
}

/// Polls `done` every millisecond until it holds or `limit` passes; returns its last value.
inline bool waitUntil(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

}  // namespace hetccl::test
