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

std::vector<std::string> rdmaDevices() { return rdmaDevicesIn(config().str("HETCCL_RDMA_SYSFS")); }

}  // namespace hetccl::net
