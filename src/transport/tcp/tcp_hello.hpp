// The hello every tcp socket sends first (connect side -> listener), and the listener's Handle payload.
// Both are fixed-size little-endian records, versioned and validated field by field.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "net/socket.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::transport::tcp {

inline constexpr uint32_t kHelloMagic = 0x48544348;  // "HCTH"
inline constexpr uint16_t kHelloVersion = 2;  ///< 2: pieces carry headers (tcp_piece.hpp)
inline constexpr uint16_t kMaxSockets = 16;

/// Wire: u32 magic, u16 version, u16 socket index, u16 nsockets, i32 from rank, i32 to rank, u64 token
/// (26 bytes, little-endian, no padding).
struct Hello {
  uint16_t socketIndex = 0;
  uint16_t socketCount = 0;
  int32_t fromRank = -1;
  int32_t toRank = -1;
  uint64_t token = 0;

  static constexpr size_t kWireBytes = 26;
  std::array<unsigned char, kWireBytes> encode() const;
  /// Decodes and checks magic, version, 1 <= socketCount <= kMaxSockets, socketIndex < socketCount and
  /// ranks >= 0. On failure returns nullopt and says why in `problem`.
  static std::optional<Hello> decode(const unsigned char* wire, std::string& problem);
};

/// The listener's address inside a transport Handle (address_handle.hpp: u32 magic 'TCPH', u16 version 1,
/// u16 family (4 or 6), u16 port, 16 address bytes, u32 IPv6 scope id).
Handle encodeAddressHandle(const net::SocketAddress& address);
/// Throws InvalidArgument when the handle is not a tcp handle.
net::SocketAddress decodeAddressHandle(const Handle& handle);

}  // namespace hetccl::transport::tcp
