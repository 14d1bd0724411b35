// detectSelf: this process's descriptor from the configuration and the operating system.
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/descriptor.hpp"
#include "core/config.hpp"

namespace hetccl::bootstrap {
namespace {

/// hostname + ':' + the first 8 characters of the kernel boot id (so two containers sharing a hostname
/// but not a kernel, or a rebooted machine, get different ids).
std::string detectHostId() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') std::strcpy(name, "unknown-host");
  std::string host(name);
  std::string boot;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  if (in) std::getline(in, boot);
  boot = boot.substr(0, 8);
  std::string id = host.substr(0, kMaxHostIdBytes - 1 - boot.size());
  if (!boot.empty()) id += ":" + boot;
  for (char& c : id)
    if (c < 0x21 || c > 0x7e) c = '_';
  return id;
}

}  // namespace

PeerInfo detectSelf(int rank, DeviceKind kind, int deviceIndex) {
  const Config& cfg = config();
  PeerInfo self;
  self.rank = rank;
  self.hostId = cfg.str("HETCCL_HOST_ID").empty() ? detectHostId() : cfg.str("HETCCL_HOST_ID");
  self.domain = cfg.str("HETCCL_DOMAIN").empty() ? std::string(deviceKindName(kind)) : cfg.str("HETCCL_DOMAIN");
  validateHostId(self.hostId);
  validateDomain(self.domain);
  self.deviceKind = kind;
  self.deviceIndex = deviceIndex;
  self.pid = static_cast<int32_t>(getpid());
  self.protocolVersion = kProtocolVersion;
  return self;
}

}  // namespace hetccl::bootstrap
