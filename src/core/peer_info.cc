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

}  // namespace hetccl
