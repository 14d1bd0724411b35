// UniqueId: the 128-byte wire layout documented in unique_id.hpp, hex form, and the three ways to make one.
#include "bootstrap/unique_id.hpp"

#include <cstring>

#include "bootstrap/crypto.hpp"
#include "bootstrap/root.hpp"
#include "bootstrap/wire.hpp"
#include "core/config.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr uint32_t kMagic = 0x44494348;  // "HCID" read as little-endian bytes 'H','C','I','D'
constexpr uint16_t kLayoutVersion = 1;
constexpr uint16_t kFlagRank0StartsRoot = 1u << 0;
constexpr uint16_t kKnownFlags = kFlagRank0StartsRoot;
constexpr size_t kSecretOffset = 28;
constexpr size_t kReservedOffset = kSecretOffset + kSecretBytes;  // 60

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void requireFixedPort(const net::SocketAddress& root) {
  if (root.storage.ss_family != AF_INET && root.storage.ss_family != AF_INET6)
    throw InvalidArgument("launcher unique id: the root address is empty");
  if (root.port() == 0) throw InvalidArgument(concat("launcher unique id: root address ", root.toString(), " needs a fixed port"));
}

}  // namespace

std::array<unsigned char, kUniqueIdBytes> UniqueId::encode() const {
  std::array<unsigned char, kUniqueIdBytes> out{};
  unsigned char* p = out.data();
  wire::putU32(p + 0, kMagic);
  wire::putU16(p + 4, kLayoutVersion);
  wire::putU16(p + 6, rank0StartsRoot ? kFlagRank0StartsRoot : 0);
  if (root.storage.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&root.storage);
    p[8] = 4;
    std::memcpy(p + 12, &a->sin_addr, 4);
  } else if (root.storage.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&root.storage);
    p[8] = 6;
    std::memcpy(p + 12, &a->sin6_addr, 16);
  } else {
    throw InvalidArgument("unique id: the root address is empty");
  }
  wire::putU16(p + 10, root.port());
  std::memcpy(p + kSecretOffset, secret.data(), kSecretBytes);
  return out;
}

UniqueId UniqueId::decode(const unsigned char* bytes, size_t len) {
  if (!bytes || len != kUniqueIdBytes)
    throw InvalidArgument(concat("unique id: expected ", kUniqueIdBytes, " bytes, got ", bytes ? len : 0));
  const unsigned char* p = bytes;
  if (wire::getU32(p) != kMagic) throw InvalidArgument("unique id: bad magic (not a hetccl unique id)");
  if (uint16_t v = wire::getU16(p + 4); v != kLayoutVersion)
    throw InvalidArgument(concat("unique id: layout version ", v, " is not supported (this build reads ", kLayoutVersion, ")"));
  uint16_t flags = wire::getU16(p + 6);
  if (flags & ~kKnownFlags) throw InvalidArgument(concat("unique id: unknown flags 0x", std::hex, flags));
  if (p[9] != 0) throw InvalidArgument("unique id: reserved byte 9 is not zero");
  uint16_t port = wire::getU16(p + 10);
  if (port == 0) throw InvalidArgument("unique id: root port is 0");
  UniqueId id;
  if (p[8] == 4) {
    if (!wire::allZero(p + 16, 12)) throw InvalidArgument("unique id: IPv4 address has non-zero padding");
    auto* a = reinterpret_cast<sockaddr_in*>(&id.root.storage);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_addr, p + 12, 4);
    id.root.length = sizeof(sockaddr_in);
  } else if (p[8] == 6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&id.root.storage);
    a->sin6_family = AF_INET6;
    std::memcpy(&a->sin6_addr, p + 12, 16);
    id.root.length = sizeof(sockaddr_in6);
  } else {
    throw InvalidArgument(concat("unique id: address family ", int(p[8]), " is neither 4 nor 6"));
  }
  id.root.setPort(port);
  std::memcpy(id.secret.data(), p + kSecretOffset, kSecretBytes);
  if (wire::allZero(id.secret.data(), kSecretBytes)) throw InvalidArgument("unique id: secret is all zero");
  if (!wire::allZero(p + kReservedOffset, kUniqueIdBytes - kReservedOffset))
    throw InvalidArgument("unique id: reserved bytes 60..127 are not zero");
  id.rank0StartsRoot = flags & kFlagRank0StartsRoot;
  return id;
}

std::string UniqueId::toHex() const {
  static const char kDigits[] = "0123456789abcdef";
  auto bytes = encode();
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

UniqueId UniqueId::fromHex(std::string_view hex) {
  if (hex.size() != 2 * kUniqueIdBytes)
    throw InvalidArgument(concat("unique id: expected ", 2 * kUniqueIdBytes, " hex digits, got ", hex.size()));
  std::array<unsigned char, kUniqueIdBytes> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) {
    int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw InvalidArgument(concat("unique id: character ", 2 * i, " is not a hex digit"));
    bytes[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return decode(bytes.data(), bytes.size());
}

UniqueId createUniqueId() {
  UniqueId id;
  randomBytes(id.secret);
  const Config& cfg = config();
  net::SocketAddress at = cfg.str("HETCCL_COMM_ID").empty() ? net::chooseLocalAddress()
                                                             : net::SocketAddress::parse(cfg.str("HETCCL_COMM_ID"));
  id.root = RendezvousRoot::startInBackground(at, id.secret, Deadline::fromConfig());
  id.rank0StartsRoot = false;
  return id;
}

UniqueId makeLauncherId(const net::SocketAddress& root) {
  requireFixedPort(root);
  UniqueId id;
  id.root = root;
  randomBytes(id.secret);
  id.rank0StartsRoot = true;
  return id;
}

UniqueId launcherIdFromSecret(const net::SocketAddress& root, std::string_view secretHex) {
  requireFixedPort(root);
  if (secretHex.size() < 32)
    throw InvalidArgument(concat("HETCCL_SECRET has ", secretHex.size(), " hex digits; at least 32 are needed"));
  std::string lower(secretHex);
  for (size_t i = 0; i < lower.size(); ++i) {
    if (hexDigit(lower[i]) < 0) throw InvalidArgument(concat("HETCCL_SECRET: character ", i, " is not a hex digit"));
    if (lower[i] >= 'A' && lower[i] <= 'F') lower[i] = static_cast<char>(lower[i] - 'A' + 'a');
  }
  // Any length is accepted; the key is an HMAC-SHA256 of the lower-cased text, so every rank derives the
  // same 32 bytes from the same string (whatever its case) without truncating long secrets.
  Secret derivationKey{};
  const std::string_view label = "hetccl launcher secret v1";
  UniqueId id;
  id.root = root;
  Mac key = hmacSha256(derivationKey, {std::span(reinterpret_cast<const unsigned char*>(label.data()), label.size()),
                                       std::span(reinterpret_cast<const unsigned char*>(lower.data()), lower.size())});
  std::memcpy(id.secret.data(), key.data(), kSecretBytes);
  id.rank0StartsRoot = true;
  return id;
}

}  // namespace hetccl::bootstrap
