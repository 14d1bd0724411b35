// The rank descriptor: what each rank tells the root about itself, as a fixed 140-byte layout
// (little-endian; no generic deserialisation):
//   0 u32 protocol version | 4 i32 rank | 8 i32 nranks          <- stable prefix, same in every version
//   12 u8 device kind | 13 u8 host id length | 14 u8 domain length | 15 u8 mesh address family (4 or 6)
//   16 i32 device index | 20 i32 pid | 24 u16 mesh port | 26 u16 reserved (0)
//   28 u8[16] mesh address (IPv4 in the first 4, rest 0) | 44 char[64] host id | 108 char[32] domain
// Unused bytes of the host id and domain are zero. Host ids are printable ASCII, 1..63 bytes; domains
// are 1..31 bytes of [A-Za-z0-9_.+-].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/peer_info.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

inline constexpr size_t kDescriptorBytes = 140;
inline constexpr size_t kDescriptorPrefixBytes = 12;
inline constexpr size_t kMaxHostIdBytes = 63;
inline constexpr size_t kMaxDomainBytes = 31;

struct RankDescriptor {
  PeerInfo info;                 ///< rank, host id, domain, device, pid, protocol version
  int32_t nranks = 0;            ///< the job size this rank was started with
  net::SocketAddress meshAddress;  ///< where this rank's mesh listener accepts higher ranks
};

/// The part every protocol version shares, so the root can name a version mismatch.
struct DescriptorPrefix {
  uint32_t protocolVersion = 0;
  int32_t rank = -1;
  int32_t nranks = 0;
};

/// Throws InvalidArgument when the host id or domain breaks the rules above.
void validateHostId(const std::string& hostId);
void validateDomain(const std::string& domain);

/// Encodes a descriptor (validates host id, domain and mesh address first: InvalidArgument).
std::vector<unsigned char> encodeDescriptor(const RankDescriptor& d);
/// Reads the stable prefix; throws InvalidArgument when fewer than 12 bytes are given.
DescriptorPrefix readDescriptorPrefix(const unsigned char* p, size_t len);
/// Decodes and validates every field; throws InvalidArgument saying which field is wrong.
RankDescriptor decodeDescriptor(const unsigned char* p, size_t len);

}  // namespace hetccl::bootstrap
