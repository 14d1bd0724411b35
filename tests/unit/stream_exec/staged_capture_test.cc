// The staged device path (src/exec/staged/device_path.hpp) refuses to be captured into a CUDA graph: its host
// thread would not run on replays, which would return the previous call's data. The refusal queues
// nothing, names the path, and leaves the path usable. On the simulated GPU (sim_gpu.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "exec/staged/device_path.hpp"
#include "core/error.hpp"
#include "sim_gpu.hpp"

namespace hetccl {
namespace {

TEST(StagedCaptureTest, ACaptureIsRefusedNamingThePathAndQueuesNothing) {
  const hetcclGpuPlugin_t& gpu = test::sim::plugin();
  int runs = 0;
  std::atomic<bool> aborted{false};
  DevicePath path(
      gpu, 0, 0, 1, [&](std::span<const algo::CollOp>) { ++runs; }, [](const std::exception&) {}, &aborted);
  void* stream = nullptr;
  gpu.streamCreate(&stream);
  void* buf = nullptr;
  gpu.allocDevice(&buf, 4096);
  std::memset(buf, 0, 4096);
  algo::CollOp op;
  op.sendbuff = op.recvbuff = buf;
  op.count = 1024;

  test::sim::beginCapture(stream);
  try {
    path.enqueue({op}, stream);
    ADD_FAILURE() << "a captured call on the staged path was accepted";
  } catch (const InvalidUsage& e) {
    EXPECT_NE(std::string(e.what()).find("staged path"), std::string::npos) << e.what();
  }
  test::sim::endCapture(stream);  // nothing joined, nothing recorded
  EXPECT_EQ(test::sim::pendingOps(), 0u);

  path.enqueue({op}, stream);  // still usable eagerly
  path.drain();
  EXPECT_EQ(runs, 1);
  gpu.streamSynchronize(stream);
  gpu.freeDevice(buf);
  gpu.streamDestroy(stream);
}

}  // namespace
}  // namespace hetccl
