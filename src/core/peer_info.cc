#include "core/peer_info.hpp"

namespace hetccl {

const char* deviceKindName(DeviceKind k) noexcept {
  switch (k) {
    case DeviceKind::Host: return "host";
    case DeviceKind::Cuda: return "cuda";
    case DeviceKind::Hip: return "hip";
  }
  return "unknown";
}

bool onSeveralHosts(const std::vector<PeerInfo>& peers) {
  for (const PeerInfo& p : peers)
    if (p.hostId != peers.front().hostId) return true;
  return false;
}

}  // namespace hetccl
