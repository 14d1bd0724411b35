// What every rank learns about every other rank at bootstrap (the decoded rank descriptor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetccl {

/// Kind of memory/device a rank computes on. Values are part of the wire protocol.
enum class DeviceKind : uint8_t { Host = 0, Cuda = 1, Hip = 2 };
const char* deviceKindName(DeviceKind k) noexcept;  // "host", "cuda", "hip"

struct PeerInfo {
  int rank = -1;
  std::string hostId;   ///< same string <=> same machine (shm reachable); HETCCL_HOST_ID overrides
  std::string domain;   ///< ranks with the same domain share a vendor stack; HETCCL_DOMAIN overrides
  DeviceKind deviceKind = DeviceKind::Host;
  int32_t deviceIndex = -1;  ///< GPU ordinal on its host, -1 for host ranks
  int32_t pid = 0;           ///< process id on its host (shm liveness checks)
  uint32_t protocolVersion = 0;
};

/// Whether `peers` (every rank's descriptor) are on more than one host: the same answer on every rank.
bool onSeveralHosts(const std::vector<PeerInfo>& peers);

}  // namespace hetccl
