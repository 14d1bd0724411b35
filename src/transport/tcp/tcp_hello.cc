#include "transport/tcp/tcp_hello.hpp"

#include <cstring>

#include "core/error.hpp"

namespace hetccl::transport::tcp {
namespace {

constexpr uint32_t kHandleMagic = 0x48504354;  // "TCPH"
constexpr uint16_t kHandleVersion = 1;

/// Little-endian writer / reader over a byte buffer.
class Writer {
 public:
  explicit Writer(unsigned char* out) : p_(out) {}
  template <typename T>
  Writer& put(T v) {
    auto u = static_cast<std::make_unsigned_t<T>>(v);
    for (size_t i = 0; i < sizeof(T); ++i) *p_++ = static_cast<unsigned char>(u >> (8 * i));
    return *this;
  }
  Writer& bytes(const void* src, size_t n) {
    std::memcpy(p_, src, n);
    p_ += n;
    return *this;
  }

 private:
  unsigned char* p_;
};

class Reader {
 public:
  explicit Reader(const unsigned char* in) : p_(in) {}
  template <typename T>
  T get() {
    std::make_unsigned_t<T> u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<std::make_unsigned_t<T>>(*p_++) << (8 * i);
    return static_cast<T>(u);
  }
  void bytes(void* dst, size_t n) {
    std::memcpy(dst, p_, n);
    p_ += n;
  }

 private:
  const unsigned char* p_;
};

}  // namespace

std::array<unsigned char, Hello::kWireBytes> Hello::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  Writer(out.data()).put(kHelloMagic).put(kHelloVersion).put(socketIndex).put(socketCount).put(fromRank).put(toRank).put(token);
  return out;
}

std::optional<Hello> Hello::decode(const unsigned char* wire, std::string& problem) {
  Reader r(wire);
  auto magic = r.get<uint32_t>();
  auto version = r.get<uint16_t>();
  Hello h;
  h.socketIndex = r.get<uint16_t>();
  h.socketCount = r.get<uint16_t>();
  h.fromRank = r.get<int32_t>();
  h.toRank = r.get<int32_t>();
  h.token = r.get<uint64_t>();
  if (magic != kHelloMagic) problem = concat("bad magic 0x", std::hex, magic);
  else if (version != kHelloVersion) problem = concat("protocol version ", version, " (expected ", kHelloVersion, ")");
  else if (h.socketCount < 1 || h.socketCount > kMaxSockets || h.socketIndex >= h.socketCount)
    problem = concat("socket ", h.socketIndex, " of ", h.socketCount);
  else if (h.fromRank < 0 || h.toRank < 0) problem = concat("ranks ", h.fromRank, " -> ", h.toRank);
  else return h;
  return std::nullopt;
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
    throw InvalidArgument(concat("tcp listen: address family ", address.storage.ss_family, " is not IPv4/IPv6"));
  }
  Handle h;
  Writer(h.bytes.data()).put(kHandleMagic).put(kHandleVersion).put(family).put(address.port()).bytes(ip, 16).put(scope);
  return h;
}

net::SocketAddress decodeAddressHandle(const Handle& handle) {
  Reader r(handle.bytes.data());
  auto magic = r.get<uint32_t>();
  auto version = r.get<uint16_t>();
  auto family = r.get<uint16_t>();
  auto port = r.get<uint16_t>();
  unsigned char ip[16];
  r.bytes(ip, 16);
  auto scope = r.get<uint32_t>();
  if (magic != kHandleMagic || version != kHandleVersion || (family != 4 && family != 6))
    throw InvalidArgument(concat("tcp connect: the peer's handle is not a valid tcp handle (magic 0x", std::hex, magic,
                                 std::dec, ", version ", version, ", family ", family, ")"));
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

}  // namespace hetccl::transport::tcp
