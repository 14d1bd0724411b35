#include "transport/ucx/ucx_wire.hpp"

#include <cstring>

#include "core/error.hpp"

namespace hetccl::transport::ucx {
namespace {

constexpr uint32_t kHandleMagic = 0x48584355;  // "UCXH"
constexpr uint16_t kHandleVersion = 1;

template <typename T>
void put(unsigned char* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i));
}
template <typename T>
T get(const unsigned char* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

std::array<unsigned char, Hello::kWireBytes> Hello::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  put<uint32_t>(out.data(), kHelloMagic);
  put<uint16_t>(out.data() + 4, kHelloVersion);
  put<uint16_t>(out.data() + 6, 0);
  put<int32_t>(out.data() + 8, fromRank);
  put<int32_t>(out.data() + 12, toRank);
  put<uint64_t>(out.data() + 16, token);
  return out;
}

std::optional<Hello> Hello::decode(const unsigned char* wire, std::string& problem) {
  const auto magic = get<uint32_t>(wire);
  const auto version = get<uint16_t>(wire + 4);
  Hello h;
  h.fromRank = get<int32_t>(wire + 8);
  h.toRank = get<int32_t>(wire + 12);
  h.token = get<uint64_t>(wire + 16);
  if (magic != kHelloMagic) problem = concat("bad magic 0x", std::hex, magic);
  else if (version != kHelloVersion) problem = concat("protocol version ", version, " (expected ", kHelloVersion, ")");
  else if (get<uint16_t>(wire + 6) != 0) problem = "reserved field is not zero";
  else if (h.fromRank < 0 || h.toRank < 0) problem = concat("ranks ", h.fromRank, " -> ", h.toRank);
  else return h;
  return std::nullopt;
}

std::array<unsigned char, PieceHeader::kWireBytes> PieceHeader::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  put<uint32_t>(out.data(), kPieceMagic);
  put<uint32_t>(out.data() + 4, flags);
  put<uint64_t>(out.data() + 8, number);
  put<uint64_t>(out.data() + 16, messageBytes);
  put<uint64_t>(out.data() + 24, pieceBytes);
  put<uint32_t>(out.data() + 32, crc);
  put<uint64_t>(out.data() + 40, token);
  for (size_t i = 0; i < stamp.size(); ++i) put<uint64_t>(out.data() + 48 + 8 * i, stamp[i]);
  return out;
}

std::optional<PieceHeader> PieceHeader::decode(const unsigned char* wire, std::string& problem) {
  if (uint32_t magic = get<uint32_t>(wire); magic != kPieceMagic) {
    problem = concat("not a ucx piece header (magic 0x", std::hex, magic, ")");
    return std::nullopt;
  }
  PieceHeader h;
  h.flags = get<uint32_t>(wire + 4);
  h.number = get<uint64_t>(wire + 8);
  h.messageBytes = get<uint64_t>(wire + 16);
  h.pieceBytes = get<uint64_t>(wire + 24);
  h.crc = get<uint32_t>(wire + 32);
  h.token = get<uint64_t>(wire + 40);
  for (size_t i = 0; i < h.stamp.size(); ++i) h.stamp[i] = get<uint64_t>(wire + 48 + 8 * i);
  if (h.flags & ~kPieceHasCrc) problem = concat("unknown piece flags 0x", std::hex, h.flags);
  else if (get<uint32_t>(wire + 36) != 0) problem = "reserved word of a piece header is not zero";
  else if (!(h.flags & kPieceHasCrc) && h.crc != 0) problem = "piece header has a crc without its flag";
  else if (h.pieceBytes > h.messageBytes || h.pieceBytes > kPieceBytes)
    problem = concat("piece of ", h.pieceBytes, " bytes in a message of ", h.messageBytes);
  else return h;
  return std::nullopt;
}

uint64_t tagBase(int fromRank, uint64_t token) {
  uint64_t x = token ^ 0x75637874616773ULL;  // splitmix64 finaliser over the token
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return (static_cast<uint64_t>(static_cast<uint32_t>(fromRank) & 0xfffffu) << 44) | ((x & 0xfffffull) << 24);
}

Handle encodeAddressHandle(const net::SocketAddress& address) {
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
    throw InvalidArgument(concat("ucx listen: address family ", address.storage.ss_family, " is not IPv4/IPv6"));
  }
  Handle h;
  unsigned char* p = h.bytes.data();
  put<uint32_t>(p, kHandleMagic);
  put<uint16_t>(p + 4, kHandleVersion);
  put<uint16_t>(p + 6, family);
  put<uint16_t>(p + 8, address.port());
  std::memcpy(p + 10, ip, 16);
  put<uint32_t>(p + 26, scope);
  return h;
}

net::SocketAddress decodeAddressHandle(const Handle& handle) {
  const unsigned char* p = handle.bytes.data();
  const auto magic = get<uint32_t>(p);
  const auto version = get<uint16_t>(p + 4);
  const auto family = get<uint16_t>(p + 6);
  const auto port = get<uint16_t>(p + 8);
  if (magic != kHandleMagic || version != kHandleVersion || (family != 4 && family != 6))
    throw InvalidArgument(concat("ucx connect: the peer's handle is not a valid ucx handle (magic 0x", std::hex, magic,
                                 std::dec, ", version ", version, ", family ", family, ")"));
  net::SocketAddress a;
  if (family == 4) {
    auto& in = reinterpret_cast<sockaddr_in&>(a.storage);
    in.sin_family = AF_INET;
    std::memcpy(&in.sin_addr, p + 10, 4);
    a.length = sizeof(sockaddr_in);
  } else {
    auto& in6 = reinterpret_cast<sockaddr_in6&>(a.storage);
    in6.sin6_family = AF_INET6;
    std::memcpy(&in6.sin6_addr, p + 10, 16);
    in6.sin6_scope_id = get<uint32_t>(p + 26);
    a.length = sizeof(sockaddr_in6);
  }
  a.setPort(port);
  return a;
}

}  // namespace hetccl::transport::ucx
