// The RDMA devices of this host (InfiniBand, RoCE and iWARP adapters: what the kernel lists under
// /sys/class/infiniband), read from sysfs without loading any verbs library.
//
// HETCCL_UCX=auto asks this before it loads UCX: without an RDMA device UCX between hosts runs over its
// own tcp transport, which moved a third of hetccl's tcp transport's bandwidth where both were measured
// (docs/STATUS.md), so auto keeps tcp there.
#pragma once

#include <string>
#include <vector>

namespace hetccl::net {

/// The names of the devices listed in `dir` (one entry per device, e.g. "mlx5_0"), sorted; empty when
/// the directory is missing, unreadable or empty. Hidden entries are skipped.
std::vector<std::string> rdmaDevicesIn(const std::string& dir);

/// rdmaDevicesIn(HETCCL_RDMA_SYSFS), whose default is /sys/class/infiniband.
std::vector<std::string> rdmaDevices();

}  // namespace hetccl::net
