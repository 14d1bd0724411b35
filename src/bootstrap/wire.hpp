// Little-endian encoding helpers for the bootstrap wire formats (unique id, handshake, frames,
// descriptors). Every wire integer is little-endian regardless of the host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hetccl::bootstrap::wire {

inline void putU16(unsigned char* p, uint16_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
}
inline void putU32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline void putI32(unsigned char* p, int32_t v) { putU32(p, static_cast<uint32_t>(v)); }
inline uint16_t getU16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t getU32(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline int32_t getI32(const unsigned char* p) { return static_cast<int32_t>(getU32(p)); }

/// True when bytes [p, p + n) are all zero (reserved fields).
inline bool allZero(const unsigned char* p, size_t n) {
  unsigned char acc = 0;
  for (size_t i = 0; i < n; ++i) acc |= p[i];
  return acc == 0;
}

}  // namespace hetccl::bootstrap::wire
