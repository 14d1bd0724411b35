// The plugin's C interface as the loader sees it, without needing a device: the exported symbol, its
// version, every entry point present, argument checks that answer before touching the vendor runtime,
// and init's answer on this machine (ready, or "no device" with the reason). Skips when the plugin was
// not built (no CUDA compiler), fails then under HETCCL_TEST_REQUIRE_GPU=1.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "device/base/gpu_plugin.h"
#include "require_gpu.hpp"

namespace {

class GpuPluginAbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("HETCCL_CUDA_PLUGIN");
    if (!path) {
      if (hetccl::test::gpuRequired()) FAIL() << "HETCCL_TEST_REQUIRE_GPU=1 but HETCCL_CUDA_PLUGIN is unset";
      GTEST_SKIP() << "libhetccl-cuda.so was not built (HETCCL_CUDA_PLUGIN unset)";
    }
    handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    plugin_ = static_cast<const hetcclGpuPlugin_t*>(dlsym(handle_, HETCCL_GPU_PLUGIN_SYMBOL));
    ASSERT_NE(plugin_, nullptr) << "no symbol " << HETCCL_GPU_PLUGIN_SYMBOL;
  }

  void* handle_ = nullptr;  // left open: the vendor runtime inside may have registered exit handlers
  const hetcclGpuPlugin_t* plugin_ = nullptr;
};

TEST_F(GpuPluginAbiTest, ExportsCurrentVersionWithEveryEntryPoint) {
  EXPECT_EQ(plugin_->version, HETCCL_GPU_PLUGIN_VERSION);
  EXPECT_STREQ(plugin_->name, "cuda");
  // Every member after version and name is a function pointer.
  const auto* first = reinterpret_cast<void* const*>(&plugin_->init);
  const size_t pointers = (sizeof(hetcclGpuPlugin_t) - offsetof(hetcclGpuPlugin_t, init)) / sizeof(void*);
  EXPECT_GE(pointers, 40u);  // v1: 33, v2: + streamOps, streamCaptureInfo, devicePointer, v3: + ipcExport, ipcOpen, ipcClose, memcpyBatchAsync
  for (size_t i = 0; i < pointers; ++i) EXPECT_NE(first[i], nullptr) << "entry point " << i << " is null";
}

TEST_F(GpuPluginAbiTest, OnlyThePluginSymbolIsExported) {
  EXPECT_EQ(dlsym(handle_, "cudaMalloc"), nullptr) << "the static CUDA runtime leaks out of the plugin";
}

TEST_F(GpuPluginAbiTest, ArgumentErrorsNameTheCall) {
  EXPECT_EQ(plugin_->reduce(nullptr, nullptr, 4, 42, 0, nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_NE(std::string(plugin_->lastError()).find("reduce"), std::string::npos) << plugin_->lastError();
  EXPECT_EQ(plugin_->reduce(nullptr, nullptr, 4, 7, 17, nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(plugin_->allocDevice(nullptr, 16), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_NE(std::string(plugin_->lastError()).find("allocDevice"), std::string::npos) << plugin_->lastError();
  uint64_t misaligned[2] = {};
  EXPECT_EQ(plugin_->streamWaitFlag(nullptr, reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(misaligned) + 4), 1, 0),
            HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(plugin_->reduce(nullptr, nullptr, 0, 7, 0, nullptr), HETCCL_GPU_OK) << "count 0 is a no-op";
}

TEST_F(GpuPluginAbiTest, InitSucceedsOrSaysWhyThereIsNoDevice) {
  const int rc = plugin_->init(nullptr);
  if (rc == HETCCL_GPU_OK) {
    int count = 0;
    EXPECT_EQ(plugin_->deviceCount(&count), HETCCL_GPU_OK);
    EXPECT_GE(count, 1);
  } else {
    EXPECT_EQ(rc, HETCCL_GPU_ERR_NO_DEVICE) << plugin_->lastError();
    EXPECT_NE(std::string(plugin_->lastError()).find("init"), std::string::npos) << plugin_->lastError();
  }
}

}  // namespace
