#include "transport/ucx/ucx_wire.hpp"

#include "core/error.hpp"
#include "transport/base/address_handle.hpp"
#include "transport/base/wire_codec.hpp"

namespace hetccl::transport::ucx {
namespace {

constexpr AddressHandleKind kHandleKind{0x48584355, 1, "ucx"};  // magic "UCXH", version 1

}  // namespace

std::array<unsigned char, Hello::kWireBytes> Hello::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  WireWriter(out.data(), out.size())
      .put<uint32_t>(kHelloMagic)
      .put<uint16_t>(kHelloVersion)
      .zeros(2)
      .put<int32_t>(fromRank)
      .put<int32_t>(toRank)
      .put<uint64_t>(token);
  return out;
}

std::optional<Hello> Hello::decode(const unsigned char* wire, std::string& problem) {
  WireReader r(wire, kWireBytes);
  if (!r.magicAndVersion(kHelloMagic, kHelloVersion, problem)) return std::nullopt;
  const bool reservedZero = r.zeros(2);
  Hello h;
  h.fromRank = r.get<int32_t>();
  h.toRank = r.get<int32_t>();
  h.token = r.get<uint64_t>();
  if (!reservedZero) problem = "reserved field is not zero";
  else if (h.fromRank < 0 || h.toRank < 0) problem = concat("ranks ", h.fromRank, " -> ", h.toRank);
  else return h;
  return std::nullopt;
}

std::array<unsigned char, PieceHeader::kWireBytes> PieceHeader::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  WireWriter w(out.data(), out.size());
  writePieceFields(w, kPieceMagic, *this);
  w.put<uint64_t>(token);
  for (uint64_t word : stamp) w.put<uint64_t>(word);
  return out;
}

std::optional<PieceHeader> PieceHeader::decode(const unsigned char* wire, std::string& problem) {
  WireReader r(wire, kWireBytes);
  PieceHeader h;
  if (!readPieceFields(r, kPieceMagic, "ucx piece header", kPieceBytes, h, problem)) return std::nullopt;
  h.token = r.get<uint64_t>();
  for (uint64_t& word : h.stamp) word = r.get<uint64_t>();
  return h;
}

uint64_t tagBase(int fromRank, uint64_t token) {
  uint64_t x = token ^ 0x75637874616773ULL;  // splitmix64 finaliser over the token
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return (static_cast<uint64_t>(static_cast<uint32_t>(fromRank) & 0xfffffu) << 44) | (x & kTagCounterMask);
}

Handle encodeAddressHandle(const net::SocketAddress& address) {
  return transport::encodeAddressHandle(address, kHandleKind);
}

net::SocketAddress decodeAddressHandle(const Handle& handle) {
  return transport::decodeAddressHandle(handle, kHandleKind);
}

}  // namespace hetccl::transport::ucx
