// The record a NetRingProxy (net_ring_proxy.hpp) sends its peer's proxy, before any payload. Fixed 96
// bytes, little-endian, every field validated on receipt (transport/base/wire_codec.hpp):
//   u32 magic 0x484e5250 ("HNRP")   u16 version 1   u16 kind (NetRingKind)
//   u32 slot                        u32 reserved (0)
//   u64 bytes                       piece: payload bytes that follow; else 0
//   u64 words[8]                    piece: its call stamp (words 0-3; 4-7 zero); report: a ring's stamp
//                                   mismatch report (the stamp found, words 0-3, and the one expected, 4-7)
// Kinds:
//   piece   the payload (the next message on the connection, `bytes` long) belongs in slot `slot` of the
//           receiver's incoming ring from the sender; the receiver marks that slot full when it has landed
//   credit  the receiver's stream emptied slot `slot` of its incoming ring: the sender may refill it
//   report  the receiver found a piece whose stamp is not the one it expected (both ranks report it)
//   bye     the sender's executor stops: nothing more comes on this connection
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hetccl::stream_exec {

inline constexpr uint32_t kNetRingMagic = 0x484e5250;  // "HNRP"
inline constexpr uint16_t kNetRingVersion = 1;
inline constexpr size_t kNetRingRecordBytes = 96;

enum class NetRingKind : uint16_t { Piece = 1, Credit = 2, Report = 3, Bye = 4 };

struct NetRingRecord {
  NetRingKind kind = NetRingKind::Piece;
  uint32_t slot = 0;
  uint64_t bytes = 0;
  uint64_t words[8] = {};
};

/// Writes `r` as kNetRingRecordBytes bytes to `out`.
void encodeNetRingRecord(const NetRingRecord& r, unsigned char* out);
/// Parses a record; false (with `problem` saying what is wrong) on a bad magic, version, kind or reserved
/// field. The slot and byte bounds are the receiver's to check (they depend on its rings).
bool decodeNetRingRecord(const unsigned char* in, NetRingRecord& out, std::string& problem);

}  // namespace hetccl::stream_exec
