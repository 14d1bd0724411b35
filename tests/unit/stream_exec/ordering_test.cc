// Back-to-back calls on one user stream, as a training loop or a replayed graph issues them: every
// iteration writes fresh inputs into the buffer on the user's stream, runs an in-place all-reduce on it
// and copies the result out on the user's stream, and nothing is drained between iterations. Two ring
// slots of 64 KiB (the smallest) cut each 1 MiB message into 16 pieces, so ring slots and landing buffers
// are reused many times within one call and across calls. A group that starts before the user's stream reaches it, or a
// user stream that does not wait for the group's end, mixes iterations up and the results are wrong.
// The same with a vendor communicator per domain (sim_vendor.hpp): the vendor calls of successive
// iterations queue on the executor's domain stream, behind and ahead of ring work.
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "bootstrap_harness.hpp"
#include "sim_gpu.hpp"
#include "sim_world.hpp"
#include "stream_test_support.hpp"

namespace hetccl::stream_exec {
namespace {

using bootstrap::testing::ScopedEnv;
using test::SimWorld;

constexpr int kIterations = 6;
constexpr size_t kCount = 256 * 1024;  // int32: 1 MiB

int32_t inputOf(int rank, int iteration, size_t i) {
  return static_cast<int32_t>((rank * 7 + i * 3 + iteration * 5) % 11) - 5;
}

/// Runs rank r's iterations; returns "" or the first wrong element.
std::string runRank(SimWorld& world, int r, int nranks) {
  const auto& gpu = test::sim::plugin();
  void* user = world.userStream(r);
  std::vector<int32_t> buf(kCount);
  std::vector<std::vector<int32_t>> in(kIterations, std::vector<int32_t>(kCount));
  std::vector<std::vector<int32_t>> out(kIterations, std::vector<int32_t>(kCount, -1000));
  for (int k = 0; k < kIterations; ++k)
    for (size_t i = 0; i < kCount; ++i) in[k][i] = inputOf(r, k, i);
  const size_t bytes = kCount * sizeof(int32_t);
  for (int k = 0; k < kIterations; ++k) {
    if (gpu.memcpyAsync(buf.data(), in[k].data(), bytes, user) != HETCCL_GPU_OK) return "memcpyAsync failed";
    algo::CollOp op;
    op.sendbuff = op.recvbuff = buf.data();
    op.count = kCount;
    op.type = DataType::Int32;
    world.exec(r).enqueue({&op, 1}, user);
    if (gpu.memcpyAsync(out[k].data(), buf.data(), bytes, user) != HETCCL_GPU_OK) return "memcpyAsync failed";
  }
  world.exec(r).drain();
  gpu.streamSynchronize(user);
  test::sim::waitIdle(std::chrono::seconds(30));  // nothing may still write into the buffers checked below
  if (!world.failuresOf(r).empty()) return world.failuresOf(r).front();
  for (int k = 0; k < kIterations; ++k)
    for (size_t i = 0; i < kCount; ++i) {
      int32_t want = 0;
      for (int q = 0; q < nranks; ++q) want += inputOf(q, k, i);
      if (out[k][i] != want)
        return concat("rank ", r, " iteration ", k, " element ", i, ": ", out[k][i], ", expected ", want);
    }
  return "";
}

void runBackToBack(const test::Layout& layout, bool vendorDomains) {
  ScopedEnv timeout("HETCCL_TIMEOUT", test::stallSeconds());  // a stall fails the test instead of hanging it
  ScopedEnv chunk("HETCCL_GPU_CHUNK_BYTES", "65536");
  ScopedEnv slots("HETCCL_GPU_SLOTS", "2");
  ScopedEnv minChunk("HETCCL_GPU_MIN_CHUNK_BYTES", vendorDomains ? "65536" : nullptr);  // several vendor chunks
  {
    const int n = static_cast<int>(layout.domainOf.size());
    std::unique_ptr<SimWorld> made = vendorDomains ? std::make_unique<SimWorld>(layout, SimWorld::VendorDomains{})
                                                   : std::make_unique<SimWorld>(layout);
    SimWorld& world = *made;
    std::vector<std::string> result(n);
    std::vector<std::thread> ranks;
    for (int r = 0; r < n; ++r)
      ranks.emplace_back([&, r] {
        try {
          result[r] = runRank(world, r, n);
        } catch (const std::exception& e) {
          result[r] = concat("rank ", r, " threw: ", e.what());
        }
      });
    for (auto& t : ranks) t.join();
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(result[r], "") << "layout " << layout.name << ", sim seed " << test::sim::seed();
      if (vendorDomains) {
        EXPECT_GE(world.domainComm(r).counters().of(test::sim::VendorCall::ReduceScatter), unsigned{kIterations});
      }
    }
  }
}

TEST(StreamOrderingTest, BackToBackCallsStayOrderedOnTheUserStream) {
  for (const test::Layout& layout : {test::Layout{"2", {0, 1}}, test::Layout{"3", {0, 1, 2}}})
    runBackToBack(layout, false);
}

TEST(StreamOrderingTest, BackToBackCallsWithVendorDomainsStayOrdered) {
  for (const test::Layout& layout : {test::Layout{"2+2", {0, 0, 1, 1}}, test::Layout{"2+1", {0, 1, 0}}})
    runBackToBack(layout, true);
}

}  // namespace
}  // namespace hetccl::stream_exec
