// The host's RDMA device list (net/rdma_devices.hpp), which decides whether HETCCL_UCX=auto may use ucx:
// read from a directory laid out as /sys/class/infiniband.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/config.hpp"
#include "net/rdma_devices.hpp"

namespace hetccl::net {
namespace {

class RdmaDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/hetccl_rdma_sysfs_XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf '" + dir_ + "'").c_str()), 0); }
  void add(const std::string& name) { ASSERT_EQ(mkdir((dir_ + "/" + name).c_str(), 0700), 0) << name; }
  std::string dir_;
};

TEST_F(RdmaDevicesTest, AMissingOrEmptyDirectoryListsNone) {
  EXPECT_TRUE(rdmaDevicesIn(dir_ + "/absent").empty());
  EXPECT_TRUE(rdmaDevicesIn(dir_).empty());
}

TEST_F(RdmaDevicesTest, EveryDeviceIsListedSortedAndHiddenEntriesAreNot) {
  add("mlx5_1");
  add("mlx5_0");
  add("rocep65s0f0");
  add(".staging");
  EXPECT_EQ(rdmaDevicesIn(dir_), (std::vector<std::string>{"mlx5_0", "mlx5_1", "rocep65s0f0"}));
}

TEST_F(RdmaDevicesTest, TheConfiguredDirectoryIsRead) {
  add("irdma0");
  const char* old = getenv("HETCCL_RDMA_SYSFS");
  const std::string saved = old ? old : "";
  setenv("HETCCL_RDMA_SYSFS", dir_.c_str(), 1);
  reloadConfig();
  const std::vector<std::string> seen = rdmaDevices();
  if (old) setenv("HETCCL_RDMA_SYSFS", saved.c_str(), 1);
  else unsetenv("HETCCL_RDMA_SYSFS");
  reloadConfig();
  EXPECT_EQ(seen, (std::vector<std::string>{"irdma0"}));
}

}  // namespace
}  // namespace hetccl::net
