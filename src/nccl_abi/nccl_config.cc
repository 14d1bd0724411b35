#include "nccl_abi/nccl_config.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::nccl_abi {

hetcclConfig_t CommSettings::hetcclConfig() const {
  hetcclConfig_t c = HETCCL_CONFIG_INITIALIZER;
  c.blocking = 1;  // the drop-in runs non-blocking operations on its own threads
  c.netName = transport.empty() ? nullptr : transport.c_str();
  return c;
}

CommSettings readConfig(const ncclConfig_t* config, const CommSettings& inherited) {
  if (!config) return inherited;
  const ncclConfig_t defaults = NCCL_CONFIG_INITIALIZER;
  ncclConfig_t c = defaults;
  size_t size = 0;
  std::memcpy(&size, config, sizeof size);
  c.magic = 0;  // a size too small to hold the magic fails the check below
  std::memcpy(static_cast<void*>(&c), config, std::min(size, sizeof c));
  if (c.magic != NCCL_CONFIG_MAGIC)
    throw InvalidArgument(concat("ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER (size ", size,
                                 ", magic 0x", std::hex, c.magic, ")"));
  if (c.version < NCCL_VERSION(2, 14, 0)) c.blocking = defaults.blocking;
  if (c.version < NCCL_VERSION(2, 17, 0)) c.netName = defaults.netName;
  if (c.blocking != NCCL_CONFIG_UNDEF_INT && c.blocking != 0 && c.blocking != 1)
    throw InvalidArgument(concat("invalid ncclConfig_t blocking attribute value ", c.blocking, " (0, 1 or unset)"));

  CommSettings s;
  s.blocking = c.blocking != 0;  // unset: blocking, NCCL's default
  if (c.netName) {
    std::string name(c.netName);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (name == "tcp" || name == "socket")
      s.transport = "tcp";
    else if (name == "shm")
      s.transport = "shm";
    else
      HETCCL_INFO(log::kInit, "ncclConfig_t netName '", c.netName,
                  "' has no hetccl meaning: transport stays automatic");
  }
  return s;
}

}  // namespace hetccl::nccl_abi
