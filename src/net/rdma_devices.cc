#include "net/rdma_devices.hpp"

#include <dirent.h>

#include <algorithm>
#include <memory>

#include "core/config.hpp"

namespace hetccl::net {

std::vector<std::string> rdmaDevicesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), &closedir);
  if (!d) return names;
  while (const dirent* e = readdir(d.get()))
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> rdmaPortsFor(const std::string& dir, const std::function<bool(const std::string&)>& allowed) {
  std::vector<std::string> out;
  for (const std::string& dev : rdmaDevicesIn(dir)) {
    bool ok = false;
    for (const std::string& netdev : rdmaDevicesIn(dir + "/" + dev + "/device/net")) ok = ok || allowed(netdev);
    if (!ok) continue;
    for (const std::string& port : rdmaDevicesIn(dir + "/" + dev + "/ports")) out.push_back(dev + ":" + port);
  }
  return out;
}

std::vector<std::string> rdmaDevices() { return rdmaDevicesIn(config().str("HETCCL_RDMA_SYSFS")); }

}  // namespace hetccl::net
