// The memory descriptor: what a rank hands to peers so that they can reach one of its registrations.
// 128 bytes (HETCCL_MEM_DESC_BYTES), integers little-endian:
//   0  u32 magic 'HRMD'   4 u16 version (1)   6 u16 memory kind (hetcclMemKind_t)
//   8  u32 owner rank     12 u32 ranks in the communicator
//   16 u32 region slot    20 u32 region generation   24 u64 region bytes
//   32 u8[16] communicator identity (random, agreed at hetcclRmaInit)
//   48 .. 95 reserved, zero
//   96 u8[32] HMAC-SHA256(key, bytes 0..95) with the communicator's service key (derived from the job's
//      secret): another job's descriptor, or any altered byte, fails authentication.
// Decoding checks, in order: magic, version (so that a newer peer is named as such), the MAC, the
// communicator identity, the ranks, the kind, the size. The descriptor holds no address and no secret.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "bootstrap/crypto.hpp"
#include "rma/mem_kind.hpp"

namespace hetccl::rma {

inline constexpr size_t kDescriptorBytes = 128;
inline constexpr uint32_t kDescriptorMagic = 0x444d5248;  // "HRMD"
inline constexpr uint16_t kDescriptorVersion = 1;

using CommIdentity = std::array<unsigned char, 16>;
using DescriptorBytes = std::array<unsigned char, kDescriptorBytes>;

struct Descriptor {
  MemKind kind = MemKind::Host;
  int owner = -1;
  int nranks = 0;
  uint32_t slot = 0;
  uint32_t generation = 0;
  uint64_t bytes = 0;
  CommIdentity comm{};
};

/// Encodes and authenticates `d` with `key`.
DescriptorBytes encodeDescriptor(const Descriptor& d, const bootstrap::Secret& key);

/// Decodes `bytes` for the communicator `comm` of `nranks` ranks in which this process is rank `self`.
/// Throws InvalidArgument saying which check failed: not a descriptor, unsupported version, failed
/// authentication (another job, or altered), another communicator, owner out of range or this rank,
/// unknown memory kind, empty region.
Descriptor decodeDescriptor(const DescriptorBytes& bytes, const bootstrap::Secret& key, const CommIdentity& comm,
                            int self, int nranks);

}  // namespace hetccl::rma
