// The 128-byte unique id (the size of ncclUniqueId): root address + random per-job secret.
// Layout (all integers little-endian, validated on decode):
//   0  u32 magic 'HCID'     4  u16 layout version   6  u16 flags
//   8  u8  address family (4 or 6)  9 u8 reserved  10 u16 port   12 u8[16] address
//   28 u8[32] secret (>= 128 random bits; 256 used)  60 .. 127 reserved, zero
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "net/socket.hpp"

namespace hetccl::bootstrap {

inline constexpr size_t kUniqueIdBytes = 128;
inline constexpr size_t kSecretBytes = 32;

struct UniqueId {
  net::SocketAddress root;                       ///< where rank 0's rendezvous root listens
  std::array<unsigned char, kSecretBytes> secret{};
  /// Set when no process has started the root yet: rank 0 starts it inside init (launcher-made ids).
  bool rank0StartsRoot = false;

  std::array<unsigned char, kUniqueIdBytes> encode() const;
  /// Throws InvalidArgument saying which field is wrong (magic, version, family, port, flags).
  static UniqueId decode(const unsigned char* bytes, size_t len);

  std::string toHex() const;
  static UniqueId fromHex(std::string_view hex);  ///< throws InvalidArgument
};

/// hetcclGetUniqueId: fresh secret, root listener started now in this process (HETCCL_COMM_ID or an
/// ephemeral port on the chosen interface), served by a background thread until the job has joined.
UniqueId createUniqueId();

/// For launchers: an id whose root rank 0 will start at `root` (port must be fixed), fresh secret.
UniqueId makeLauncherId(const net::SocketAddress& root);

/// For launchers that only give an address (torchrun MASTER_ADDR/PORT, Open MPI, Slurm): the secret
/// comes from `secretHex` (HETCCL_SECRET, >= 32 hex digits); throws InvalidArgument when it is short.
UniqueId launcherIdFromSecret(const net::SocketAddress& root, std::string_view secretHex);

}  // namespace hetccl::bootstrap
