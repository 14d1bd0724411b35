// Memory kinds of registrations (values of hetcclMemKind_t; part of the descriptor).
#pragma once

#include <cstdint>

namespace hetccl::rma {

enum class MemKind : uint16_t { Host = 0, Cuda = 1, Hip = 2 };

inline const char* memKindName(MemKind k) {
  switch (k) {
    case MemKind::Host: return "host";
    case MemKind::Cuda: return "cuda";
    case MemKind::Hip: return "hip";
  }
  return "unknown";
}

inline bool isDevice(MemKind k) { return k != MemKind::Host; }

}  // namespace hetccl::rma
