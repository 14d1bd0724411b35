// The RDMA devices of this host (InfiniBand, RoCE and iWARP adapters: what the kernel lists under
// /sys/class/infiniband), read from sysfs without loading any verbs library.
//
// HETCCL_UCX=auto asks this before it loads UCX: without an RDMA device UCX between hosts runs over its
// own tcp transport, which moved a third of hetccl's tcp transport's bandwidth where both were measured
// (docs/STATUS.md), so auto keeps tcp there.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hetccl::net {

/// The names of the devices listed in `dir` (one entry per device, e.g. "mlx5_0"), sorted; empty when
/// the directory is missing, unreadable or empty. Hidden entries are skipped.
std::vector<std::string> rdmaDevicesIn(const std::string& dir);

/// rdmaDevicesIn(HETCCL_RDMA_SYSFS), whose default is /sys/class/infiniband.
std::vector<std::string> rdmaDevices();

/// UCX's names ("mlx5_0:1") of the ports of the devices listed in `dir` whose network interface (the
/// IPoIB or RoCE netdev, dir/DEV/device/net/NAME) passes `allowed`: the RDMA devices that go with the
/// interfaces HETCCL_SOCKET_IFNAME allows. Devices without a netdev or a ports directory are left out.
std::vector<std::string> rdmaPortsFor(const std::string& dir, const std::function<bool(const std::string&)>& allowed);

}  // namespace hetccl::net
