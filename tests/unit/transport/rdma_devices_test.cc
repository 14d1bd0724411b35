// The host's RDMA device list (net/rdma_devices.hpp), read from a directory laid out as
// /sys/class/infiniband, and the HETCCL_UCX policy it decides (transport/ucx/ucx_policy.hpp), which the
// communicators' links and the agents share.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "net/rdma_devices.hpp"
#include "transport/ucx/ucx_policy.hpp"

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
  /// ucxPolicy() under HETCCL_UCX=`mode` and HETCCL_RDMA_SYSFS=dir_; both restored afterwards.
  transport::UcxPolicy policyUnder(const char* mode) {
    setenv("HETCCL_UCX", mode, 1);
    setenv("HETCCL_RDMA_SYSFS", dir_.c_str(), 1);
    reloadConfig();
    transport::UcxPolicy policy;
    try {
      policy = transport::ucxPolicy();
    } catch (...) {
      restore();
      throw;
    }
    restore();
    return policy;
  }
  void restore() {
    unsetenv("HETCCL_UCX");
    unsetenv("HETCCL_RDMA_SYSFS");
    reloadConfig();
  }
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

TEST_F(RdmaDevicesTest, UcxPolicyAutoNeedsAnRdmaDeviceOnNeedsNoneOffNeverAllows) {
  transport::UcxPolicy p = policyUnder("auto");
  EXPECT_FALSE(p.rdmaDevice);
  EXPECT_FALSE(p.allowed);
  EXPECT_NE(p.whyNot.find("no RDMA device on this host (" + dir_ + " lists none)"), std::string::npos) << p.whyNot;
  EXPECT_TRUE(policyUnder("on").allowed);
  EXPECT_EQ(policyUnder("off").whyNot, "HETCCL_UCX=off");

  add("mlx5_0");
  p = policyUnder("auto");
  EXPECT_TRUE(p.rdmaDevice);
  EXPECT_TRUE(p.allowed);
  EXPECT_EQ(p.whyNot, "");
  EXPECT_EQ(policyUnder("on").mode, transport::UcxMode::On);
  p = policyUnder("off");
  EXPECT_EQ(p.mode, transport::UcxMode::Off);
  EXPECT_TRUE(p.rdmaDevice);
  EXPECT_FALSE(p.allowed);
}

}  // namespace
}  // namespace hetccl::net
