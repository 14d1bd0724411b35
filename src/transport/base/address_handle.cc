#include "transport/base/address_handle.hpp"

#include <cstring>

#include "core/error.hpp"
#include "transport/base/wire_codec.hpp"

namespace hetccl::transport {

Handle encodeAddressHandle(const net::SocketAddress& address, const AddressHandleKind& kind) {
  unsigned char ip[16] = {};
  uint16_t family = 0;
  uint32_t scope = 0;
  if (address.storage.ss_family == AF_INET) {
    family = 4;
    std::memcpy(ip, &reinterpret_cast<const sockaddr_in&>(address.storage).sin_addr, 4);
  } else if (address.storage.ss_family == AF_INET6) {
    family = 6;
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address.storage);
    std::memcpy(ip, &in6.sin6_addr, 16);
    scope = in6.sin6_scope_id;
  } else {
    throw InvalidArgument(
        concat(kind.transport, " listen: address family ", address.storage.ss_family, " is not IPv4/IPv6"));
  }
  Handle h;
  WireWriter(h.bytes.data(), h.bytes.size())
      .put<uint32_t>(kind.magic)
      .put<uint16_t>(kind.version)
      .put<uint16_t>(family)
      .put<uint16_t>(address.port())
      .bytes(ip, sizeof ip)
      .put<uint32_t>(scope);
  return h;
}

net::SocketAddress decodeAddressHandle(const Handle& handle, const AddressHandleKind& kind) {
  WireReader r(handle.bytes.data(), handle.bytes.size());
  const auto magic = r.get<uint32_t>();
  const auto version = r.get<uint16_t>();
  const auto family = r.get<uint16_t>();
  const auto port = r.get<uint16_t>();
  unsigned char ip[16];
  r.bytes(ip, sizeof ip);
  const auto scope = r.get<uint32_t>();
  if (magic != kind.magic || version != kind.version || (family != 4 && family != 6))
    throw InvalidArgument(concat(kind.transport, " connect: the peer's handle is not a valid ", kind.transport,
                                 " handle (magic 0x", std::hex, magic, std::dec, ", version ", version, ", family ",
                                 family, ")"));
  net::SocketAddress a;
  if (family == 4) {
    auto& in = reinterpret_cast<sockaddr_in&>(a.storage);
    in.sin_family = AF_INET;
    std::memcpy(&in.sin_addr, ip, 4);
    a.length = sizeof(sockaddr_in);
  } else {
    auto& in6 = reinterpret_cast<sockaddr_in6&>(a.storage);
    in6.sin6_family = AF_INET6;
    std::memcpy(&in6.sin6_addr, ip, 16);
    in6.sin6_scope_id = scope;
    a.length = sizeof(sockaddr_in6);
  }
  a.setPort(port);
  return a;
}

}  // namespace hetccl::transport
