// HETCCL_UCX, decided in one place for every user of UCX between hosts: the communicators' links
// (transport/links/link_set.cc) and the agents' payload (agent/net_link.hpp).
//
//   off   never UCX
//   on    UCX between hosts wherever libucp loads (ucxUnavailableReason() is "")
//   auto  UCX only where this host also lists an RDMA device (net/rdma_devices.hpp): without one UCX
//         between hosts runs over its own tcp transport, slower than hetccl's tcp transport
//
// The policy never loads libucp: callers ask ucxUnavailableReason() only when the policy allows UCX and
// they want it, so a job that uses no UCX never opens the library.
#pragma once

#include <string>

namespace hetccl::transport {

enum class UcxMode { Auto, On, Off };

struct UcxPolicy {
  UcxMode mode = UcxMode::Auto;
  bool rdmaDevice = false;  ///< this host lists an RDMA device (HETCCL_RDMA_SYSFS)
  bool allowed = false;     ///< links to other hosts may use UCX: on, or auto with an RDMA device
  std::string whyNot;       ///< when !allowed, why (for INFO logs), e.g. "HETCCL_UCX=off"; else ""
};

/// Reads HETCCL_UCX (InvalidArgument naming the accepted values for anything but auto, on and off) and
/// this host's RDMA devices.
UcxPolicy ucxPolicy();

}  // namespace hetccl::transport
