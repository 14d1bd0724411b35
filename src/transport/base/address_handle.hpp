// A listener's socket address inside a transport Handle, as the tcp and ucx transports publish theirs
// (through the bootstrap; the peer connects to it). Wire (30 bytes, little-endian; the rest of the
// 128-byte Handle is 0):
//   0 u32 magic (the transport's) | 4 u16 version | 6 u16 family (4 or 6) | 8 u16 port
//   10 16 address bytes (IPv4: the first 4, the rest 0) | 26 u32 IPv6 scope id (IPv4: 0)
// The magic keeps one transport from connecting to another's handle; the version, builds of different
// handle versions from misreading each other.
#pragma once

#include <cstdint>

#include "net/socket.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::transport {

/// Whose handle: the transport's magic and handle version, and its name for messages ("tcp", "ucx").
struct AddressHandleKind {
  uint32_t magic;
  uint16_t version;
  const char* transport;
};

/// Throws InvalidArgument ("<transport> listen: address family N is not IPv4/IPv6") for another family.
Handle encodeAddressHandle(const net::SocketAddress& address, const AddressHandleKind& kind);

/// Throws InvalidArgument ("<transport> connect: the peer's handle is not a valid <transport> handle
/// (magic 0x..., version V, family F)") when the magic or version is not `kind`'s or the family is unknown.
net::SocketAddress decodeAddressHandle(const Handle& handle, const AddressHandleKind& kind);

}  // namespace hetccl::transport
