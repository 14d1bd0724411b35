#include "transport/ucx/ucx_policy.hpp"

#include "core/config.hpp"
#include "core/error.hpp"
#include "net/rdma_devices.hpp"

namespace hetccl::transport {

UcxPolicy ucxPolicy() {
  const std::string mode = config().str("HETCCL_UCX");
  UcxPolicy policy;
  if (mode == "off") {
    policy.mode = UcxMode::Off;
  } else if (mode == "on") {
    policy.mode = UcxMode::On;
  } else if (mode != "auto") {
    throw InvalidArgument(concat("HETCCL_UCX=", mode, " (expected auto, on or off)"));
  }
  policy.rdmaDevice = !net::rdmaDevices().empty();
  policy.allowed = policy.mode == UcxMode::On || (policy.mode == UcxMode::Auto && policy.rdmaDevice);
  if (policy.mode == UcxMode::Off) {
    policy.whyNot = "HETCCL_UCX=off";
  } else if (!policy.allowed) {
    policy.whyNot = concat("no RDMA device on this host (", config().str("HETCCL_RDMA_SYSFS"),
                           " lists none): UCX would run over tcp, slower than the tcp transport; HETCCL_UCX=on uses it anyway");
  }
  return policy;
}

}  // namespace hetccl::transport
