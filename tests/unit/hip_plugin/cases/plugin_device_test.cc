// The plugin's initialisation, versions and devices (the current device is per thread), against the fake
// HIP runtime in this process (plugin_helpers.hpp says in which configuration).
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "harness.hpp"
#include "plugin_helpers.hpp"

namespace hip_test {
namespace {

TEST(HipPlugin, InitVersionAndName) {
  EXPECT_EQ(P().version, HETCCL_GPU_PLUGIN_VERSION);
  EXPECT_STREQ(P().name, "hip");
  EXPECT_EQ(P().init(nullptr), HETCCL_GPU_OK);  // later calls return the first result
  int runtime = 0, driver = 0;
  EXPECT_GPU_OK(P().versions(&runtime, &driver));
  EXPECT_EQ(runtime, 6020);  // the fake's default 6.2.0 as 1000*major + 10*minor
  EXPECT_EQ(driver, 6020);
  EXPECT_EQ(P().versions(nullptr, &driver), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_NE(P().lastError(), nullptr);
  bool logged = false;
  for (const std::string& l : logLines()) logged = logged || l.find("HIP") != std::string::npos;
  EXPECT_TRUE(logged) << "init logs nothing through the core's logger";
}

TEST(HipPlugin, DevicesAreCurrentPerThread) {
  int count = 0;
  EXPECT_GPU_OK(P().deviceCount(&count));
  EXPECT_EQ(count, 2);
  int d = -1;
  EXPECT_GPU_OK(P().getDevice(&d));
  EXPECT_EQ(d, 0);
  std::thread([] {
    EXPECT_GPU_OK(P().setDevice(1));
    int inner = -1;
    EXPECT_GPU_OK(P().getDevice(&inner));
    EXPECT_EQ(inner, 1);
    void* p = nullptr;
    EXPECT_GPU_OK(P().allocDevice(&p, 64));
    int type = -1, dev = -1;
    EXPECT_GPU_OK(P().pointerQuery(p, &type, &dev));
    EXPECT_EQ(type, HETCCL_GPU_MEM_DEVICE);
    EXPECT_EQ(dev, 1);
    EXPECT_GPU_OK(P().freeDevice(p));
  }).join();
  EXPECT_GPU_OK(P().getDevice(&d));
  EXPECT_EQ(d, 0) << "another thread's setDevice changed this thread's device";
  expectRuntimeError(P().setDevice(7), "hipSetDevice", "hipErrorInvalidDevice");
  EXPECT_EQ(P().deviceCount(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().getDevice(nullptr), HETCCL_GPU_ERR_ARGUMENT);
}

}  // namespace
}  // namespace hip_test
