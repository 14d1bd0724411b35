#include "transport/tcp/tcp_hello.hpp"

#include "core/error.hpp"
#include "transport/base/address_handle.hpp"
#include "transport/base/wire_codec.hpp"

namespace hetccl::transport::tcp {
namespace {

constexpr AddressHandleKind kHandleKind{0x48504354, 1, "tcp"};  // magic "TCPH", version 1

}  // namespace

std::array<unsigned char, Hello::kWireBytes> Hello::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  WireWriter(out.data(), out.size())
      .put<uint32_t>(kHelloMagic)
      .put<uint16_t>(kHelloVersion)
      .put<uint16_t>(socketIndex)
      .put<uint16_t>(socketCount)
      .put<int32_t>(fromRank)
      .put<int32_t>(toRank)
      .put<uint64_t>(token);
  return out;
}

std::optional<Hello> Hello::decode(const unsigned char* wire, std::string& problem) {
  WireReader r(wire, kWireBytes);
  if (!r.magicAndVersion(kHelloMagic, kHelloVersion, problem)) return std::nullopt;
  Hello h;
  h.socketIndex = r.get<uint16_t>();
  h.socketCount = r.get<uint16_t>();
  h.fromRank = r.get<int32_t>();
  h.toRank = r.get<int32_t>();
  h.token = r.get<uint64_t>();
  if (h.socketCount < 1 || h.socketCount > kMaxSockets || h.socketIndex >= h.socketCount)
    problem = concat("socket ", h.socketIndex, " of ", h.socketCount);
  else if (h.fromRank < 0 || h.toRank < 0) problem = concat("ranks ", h.fromRank, " -> ", h.toRank);
  else return h;
  return std::nullopt;
}

Handle encodeAddressHandle(const net::SocketAddress& address) {
  return transport::encodeAddressHandle(address, kHandleKind);
}

net::SocketAddress decodeAddressHandle(const Handle& handle) {
  return transport::decodeAddressHandle(handle, kHandleKind);
}

}  // namespace hetccl::transport::tcp
