// An agent's metadata blob (hetcclAgentGetMetadata / hetcclAgentLoadRemote): how to reach the agent and
// which regions it registered, authenticated with the deployment's secret. Integers little-endian:
//   0  u32 magic 'HAGM'   4 u16 version (1)   6 u16 reserved (0)
//   8  u8[16] incarnation: random per hetcclAgentCreate (a restarted agent is another incarnation)
//   24 u64 sequence: grows with every registration change (a newer blob of one incarnation replaces an older)
//   32 u32 pid   36 u32 region count
//   40 name, address, host identity: each a u16 length and its bytes
//   then per region: u32 id, u32 generation, u16 memory kind, u16 reserved, u64 bytes
//   last 32 bytes: HMAC-SHA256(key, every byte before it), key = agentKey(secret)
// Decoding checks, in order: size, magic, version (a newer peer is named as such), the MAC, then every
// length against the blob (never read past it) and the field values.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bootstrap/crypto.hpp"
#include "rma/mem_kind.hpp"

namespace hetccl::agent {

inline constexpr uint32_t kMetadataMagic = 0x4d474148;  // "HAGM"
inline constexpr uint16_t kMetadataVersion = 1;
inline constexpr size_t kMaxName = 63;  ///< HETCCL_AGENT_NAME_MAX

using Incarnation = std::array<unsigned char, 16>;

struct RegionInfo {
  uint32_t id = 0;
  uint32_t generation = 0;
  rma::MemKind kind = rma::MemKind::Host;
  uint64_t bytes = 0;
};

struct Metadata {
  std::string name;
  Incarnation incarnation{};
  uint64_t sequence = 0;
  std::string address;  ///< "ip:port" of the agent's listener
  std::string hostId;   ///< same string: the same machine (shared memory reachable)
  uint32_t pid = 0;
  std::vector<RegionInfo> regions;
};

/// The key every agent MAC is made with: HMAC-SHA256(secret, label). Throws InvalidArgument for a secret
/// shorter than 16 bytes.
bootstrap::Secret agentKey(std::span<const unsigned char> secret);

/// Whether `name` is a valid agent name (1..kMaxName characters of [A-Za-z0-9._:-]).
bool validName(const std::string& name);

std::vector<unsigned char> encodeMetadata(const Metadata& m, const bootstrap::Secret& key);
/// Throws InvalidArgument saying which check failed.
Metadata decodeMetadata(std::span<const unsigned char> blob, const bootstrap::Secret& key);

}  // namespace hetccl::agent
