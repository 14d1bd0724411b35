#include "bootstrap/descriptor.hpp"

#include <cstring>

#include "bootstrap/wire.hpp"
#include "core/error.hpp"

namespace hetccl::bootstrap {
namespace {

constexpr size_t kHostOffset = 44;
constexpr size_t kDomainOffset = 108;
constexpr size_t kHostField = 64;
constexpr size_t kDomainField = 32;

bool domainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '+' || c == '-';
}

std::string readText(const unsigned char* field, size_t fieldBytes, size_t len, const char* what) {
  if (len == 0 || len >= fieldBytes) throw InvalidArgument(concat("rank descriptor: ", what, " length ", len, " out of range"));
  if (!wire::allZero(field + len, fieldBytes - len))
    throw InvalidArgument(concat("rank descriptor: ", what, " padding is not zero"));
  return std::string(reinterpret_cast<const char*>(field), len);
}

}  // namespace

void validateHostId(const std::string& hostId) {
  if (hostId.empty() || hostId.size() > kMaxHostIdBytes)
    throw InvalidArgument(concat("host id '", hostId, "' must have 1..", kMaxHostIdBytes, " bytes"));
  for (char c : hostId)
    if (c < 0x21 || c > 0x7e) throw InvalidArgument(concat("host id '", hostId, "' has a non-printable or space character"));
}

void validateDomain(const std::string& domain) {
  if (domain.empty() || domain.size() > kMaxDomainBytes)
    throw InvalidArgument(concat("domain '", domain, "' must have 1..", kMaxDomainBytes, " bytes"));
  for (char c : domain)
    if (!domainChar(c)) throw InvalidArgument(concat("domain '", domain, "' may only use [A-Za-z0-9_.+-]"));
}

std::vector<unsigned char> encodeDescriptor(const RankDescriptor& d) {
  validateHostId(d.info.hostId);
  validateDomain(d.info.domain);
  std::vector<unsigned char> out(kDescriptorBytes, 0);
  unsigned char* p = out.data();
  wire::putU32(p, d.info.protocolVersion);
  wire::putI32(p + 4, d.info.rank);
  wire::putI32(p + 8, d.nranks);
  p[12] = static_cast<unsigned char>(d.info.deviceKind);
  p[13] = static_cast<unsigned char>(d.info.hostId.size());
  p[14] = static_cast<unsigned char>(d.info.domain.size());
  wire::putI32(p + 16, d.info.deviceIndex);
  wire::putI32(p + 20, d.info.pid);
  const auto& ss = d.meshAddress.storage;
  if (ss.ss_family == AF_INET) {
    p[15] = 4;
    std::memcpy(p + 28, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, 4);
  } else if (ss.ss_family == AF_INET6) {
    p[15] = 6;
    std::memcpy(p + 28, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, 16);
  } else {
    throw InvalidArgument("rank descriptor: mesh address is empty");
  }
  wire::putU16(p + 24, d.meshAddress.port());
  std::memcpy(p + kHostOffset, d.info.hostId.data(), d.info.hostId.size());
  std::memcpy(p + kDomainOffset, d.info.domain.data(), d.info.domain.size());
  return out;
}

DescriptorPrefix readDescriptorPrefix(const unsigned char* p, size_t len) {
  if (len < kDescriptorPrefixBytes) throw InvalidArgument(concat("rank descriptor of ", len, " bytes is truncated"));
  return {wire::getU32(p), wire::getI32(p + 4), wire::getI32(p + 8)};
}

RankDescriptor decodeDescriptor(const unsigned char* p, size_t len) {
  if (len != kDescriptorBytes)
    throw InvalidArgument(concat("rank descriptor has ", len, " bytes, expected ", kDescriptorBytes));
  RankDescriptor d;
  d.info.protocolVersion = wire::getU32(p);
  d.info.rank = wire::getI32(p + 4);
  d.nranks = wire::getI32(p + 8);
  if (p[12] > static_cast<unsigned char>(DeviceKind::Hip))
    throw InvalidArgument(concat("rank descriptor: unknown device kind ", int(p[12])));
  d.info.deviceKind = static_cast<DeviceKind>(p[12]);
  d.info.deviceIndex = wire::getI32(p + 16);
  if (d.info.deviceIndex < -1) throw InvalidArgument(concat("rank descriptor: device index ", d.info.deviceIndex));
  d.info.pid = wire::getI32(p + 20);
  if (d.info.pid <= 0) throw InvalidArgument(concat("rank descriptor: pid ", d.info.pid));
  if (wire::getU16(p + 26) != 0) throw InvalidArgument("rank descriptor: reserved field is not zero");
  uint16_t port = wire::getU16(p + 24);
  if (port == 0) throw InvalidArgument("rank descriptor: mesh port is 0");
  if (p[15] == 4) {
    if (!wire::allZero(p + 32, 12)) throw InvalidArgument("rank descriptor: IPv4 mesh address has non-zero padding");
    auto* a = reinterpret_cast<sockaddr_in*>(&d.meshAddress.storage);
    a->sin_family = AF_INET;
    std::memcpy(&a->sin_addr, p + 28, 4);
    d.meshAddress.length = sizeof(sockaddr_in);
  } else if (p[15] == 6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&d.meshAddress.storage);
    a->sin6_family = AF_INET6;
    std::memcpy(&a->sin6_addr, p + 28, 16);
    d.meshAddress.length = sizeof(sockaddr_in6);
  } else {
    throw InvalidArgument(concat("rank descriptor: mesh address family ", int(p[15]), " is neither 4 nor 6"));
  }
  d.meshAddress.setPort(port);
  d.info.hostId = readText(p + kHostOffset, kHostField, p[13], "host id");
  d.info.domain = readText(p + kDomainOffset, kDomainField, p[14], "domain");
  validateHostId(d.info.hostId);
  validateDomain(d.info.domain);
  return d;
}

}  // namespace hetccl::bootstrap
