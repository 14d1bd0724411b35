#include "device/base/runtime.hpp"

namespace hetccl::device {

const char* memoryKindName(MemoryKind kind) noexcept {
  switch (kind) {
    case MemoryKind::Host: return "host";
    case MemoryKind::Cuda: return "cuda";
    case MemoryKind::Hip: return "hip";
  }
  return "unknown";
}

}  // namespace hetccl::device
