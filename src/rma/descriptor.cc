#include "rma/descriptor.hpp"

#include <cstring>

#include "core/error.hpp"

namespace hetccl::rma {
namespace {

constexpr size_t kMacOffset = 96;

template <typename T>
void put(DescriptorBytes& b, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) b[at + i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i));
}

template <typename T>
T get(const DescriptorBytes& b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return static_cast<T>(v);
}

bootstrap::Mac macOf(const DescriptorBytes& b, const bootstrap::Secret& key) {
  static constexpr char kLabel[] = "hetccl rma descriptor v1";
  return bootstrap::hmacSha256(key, {std::span(reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1),
                                     std::span<const unsigned char>(b.data(), kMacOffset)});
}

}  // namespace

DescriptorBytes encodeDescriptor(const Descriptor& d, const bootstrap::Secret& key) {
  DescriptorBytes b{};
  put<uint32_t>(b, 0, kDescriptorMagic);
  put<uint16_t>(b, 4, kDescriptorVersion);
  put<uint16_t>(b, 6, static_cast<uint16_t>(d.kind));
  put<uint32_t>(b, 8, static_cast<uint32_t>(d.owner));
  put<uint32_t>(b, 12, static_cast<uint32_t>(d.nranks));
  put<uint32_t>(b, 16, d.slot);
  put<uint32_t>(b, 20, d.generation);
  put<uint64_t>(b, 24, d.bytes);
  std::memcpy(b.data() + 32, d.comm.data(), d.comm.size());
  const bootstrap::Mac mac = macOf(b, key);
  std::memcpy(b.data() + kMacOffset, mac.data(), mac.size());
  return b;
}

Descriptor decodeDescriptor(const DescriptorBytes& b, const bootstrap::Secret& key, const CommIdentity& comm,
                            int self, int nranks) {
  if (get<uint32_t>(b, 0) != kDescriptorMagic)
    throw InvalidArgument("not a hetccl memory descriptor (bad magic): garbage, truncated or not from hetcclMemExport");
  const uint16_t version = get<uint16_t>(b, 4);
  if (version != kDescriptorVersion)
    throw InvalidArgument(concat("memory descriptor version ", version, " is not supported (this build reads version ",
                                 kDescriptorVersion, ")"));
  bootstrap::Mac mac;
  std::memcpy(mac.data(), b.data() + kMacOffset, mac.size());
  if (!bootstrap::macEqual(mac, macOf(b, key)))
    throw InvalidArgument("memory descriptor failed authentication: it comes from another job, or it was altered");
  Descriptor d;
  std::memcpy(d.comm.data(), b.data() + 32, d.comm.size());
  if (d.comm != comm)
    throw InvalidArgument("memory descriptor belongs to another communicator of this job (import it where it was exported)");
  d.owner = static_cast<int>(get<uint32_t>(b, 8));
  d.nranks = static_cast<int>(get<uint32_t>(b, 12));
  if (d.nranks != nranks || d.owner < 0 || d.owner >= nranks)
    throw InvalidArgument(concat("memory descriptor names rank ", d.owner, " of ", d.nranks, "; this communicator has ",
                                 nranks, " ranks"));
  if (d.owner == self)
    throw InvalidArgument(concat("memory descriptor is one of this rank's own registrations (rank ", self,
                                 "): local memory needs no RMA"));
  const uint16_t kind = get<uint16_t>(b, 6);
  if (kind > static_cast<uint16_t>(MemKind::Hip)) throw InvalidArgument(concat("memory descriptor has unknown memory kind ", kind));
  d.kind = static_cast<MemKind>(kind);
  d.slot = get<uint32_t>(b, 16);
  d.generation = get<uint32_t>(b, 20);
  d.bytes = get<uint64_t>(b, 24);
  if (d.bytes == 0) throw InvalidArgument("memory descriptor describes an empty region");
  return d;
}

}  // namespace hetccl::rma
