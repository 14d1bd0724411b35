#include "agent/metadata.hpp"

#include <cstring>

#include "agent/byte_codec.hpp"
#include "core/error.hpp"

namespace hetccl::agent {
namespace {

constexpr size_t kMacBytes = 32;
constexpr size_t kMaxRegions = size_t{1} << 20;

bootstrap::Mac macOf(std::span<const unsigned char> body, const bootstrap::Secret& key) {
  static constexpr char kLabel[] = "hetccl agent metadata v1";
  return bootstrap::hmacSha256(key, {std::span(reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1), body});
}

}  // namespace

bootstrap::Secret agentKey(std::span<const unsigned char> secret) {
  if (secret.size() < 16)
    throw InvalidArgument(concat("the agent secret has ", secret.size(),
                                 " bytes; at least 16 are needed (options.secret, or HETCCL_SECRET with >= 32 hex digits)"));
  // HKDF-extract with a zero salt: secrets of any length become a 32-byte key.
  static constexpr char kLabel[] = "hetccl agent key v1";
  const bootstrap::Secret zero{};
  const bootstrap::Mac k =
      bootstrap::hmacSha256(zero, {std::span(reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1), secret});
  bootstrap::Secret key{};
  std::memcpy(key.data(), k.data(), key.size());
  return key;
}

bool validName(const std::string& name) {
  if (name.empty() || name.size() > kMaxName) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == ':' || c == '-'))
      return false;
  return true;
}

std::vector<unsigned char> encodeMetadata(const Metadata& m, const bootstrap::Secret& key) {
  ByteWriter w;
  w.put<uint32_t>(kMetadataMagic);
  w.put<uint16_t>(kMetadataVersion);
  w.put<uint16_t>(0);
  w.bytes(m.incarnation);
  w.put<uint64_t>(m.sequence);
  w.put<uint32_t>(m.pid);
  w.put<uint32_t>(static_cast<uint32_t>(m.regions.size()));
  w.text(m.name);
  w.text(m.address);
  w.text(m.hostId);
  for (const RegionInfo& r : m.regions) {
    w.put<uint32_t>(r.id);
    w.put<uint32_t>(r.generation);
    w.put<uint16_t>(static_cast<uint16_t>(r.kind));
    w.put<uint16_t>(0);
    w.put<uint64_t>(r.bytes);
  }
  const bootstrap::Mac mac = macOf(w.data(), key);
  w.bytes(mac);
  return std::move(w.data());
}

Metadata decodeMetadata(std::span<const unsigned char> blob, const bootstrap::Secret& key) {
  if (blob.size() < 40 + kMacBytes)
    throw InvalidArgument(concat("not a hetccl agent metadata blob: ", blob.size(), " bytes (truncated?)"));
  ByteReader r(blob.first(blob.size() - kMacBytes), "agent metadata blob");
  if (r.get<uint32_t>() != kMetadataMagic)
    throw InvalidArgument("not a hetccl agent metadata blob (bad magic): garbage, truncated or not from hetcclAgentGetMetadata");
  const uint16_t version = r.get<uint16_t>();
  if (version != kMetadataVersion)
    throw InvalidArgument(concat("agent metadata version ", version, " is not supported (this build reads version ",
                                 kMetadataVersion, ")"));
  bootstrap::Mac mac;
  std::memcpy(mac.data(), blob.data() + blob.size() - kMacBytes, mac.size());
  if (!bootstrap::macEqual(mac, macOf(blob.first(blob.size() - kMacBytes), key)))
    throw InvalidArgument("agent metadata failed authentication: made with another secret, or altered (or truncated)");
  Metadata m;
  if (r.get<uint16_t>() != 0) throw InvalidArgument("agent metadata: reserved field set");
  auto inc = r.bytes(m.incarnation.size());
  std::memcpy(m.incarnation.data(), inc.data(), inc.size());
  m.sequence = r.get<uint64_t>();
  m.pid = r.get<uint32_t>();
  const uint32_t nregions = r.get<uint32_t>();
  if (nregions > kMaxRegions) throw InvalidArgument(concat("agent metadata lists ", nregions, " regions"));
  m.name = r.text(kMaxName);
  if (!validName(m.name)) throw InvalidArgument("agent metadata carries an invalid agent name");
  m.address = r.text(256);
  m.hostId = r.text(1024);
  if (r.left() != size_t{nregions} * 20)
    throw InvalidArgument(concat("agent metadata: ", r.left(), " bytes of regions for ", nregions, " regions"));
  m.regions.resize(nregions);
  for (RegionInfo& g : m.regions) {
    g.id = r.get<uint32_t>();
    g.generation = r.get<uint32_t>();
    const uint16_t kind = r.get<uint16_t>();
    if (kind > static_cast<uint16_t>(rma::MemKind::Hip)) throw InvalidArgument(concat("agent metadata: unknown memory kind ", kind));
    g.kind = static_cast<rma::MemKind>(kind);
    (void)r.get<uint16_t>();
    g.bytes = r.get<uint64_t>();
    if (g.bytes == 0 || g.generation == 0) throw InvalidArgument("agent metadata: an empty or unnumbered region");
  }
  return m;
}

}  // namespace hetccl::agent
