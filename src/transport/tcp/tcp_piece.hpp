// The header in front of every tcp piece (tcp_striping.hpp says how messages become pieces). It lets the
// receiver check, before any byte lands in its buffer, that the piece is the one it expects: its number
// on the connection, the size of the message it belongs to (so a send/receive size mismatch between
// ranks is an error naming both sizes, not corrupt data) and its own size; with HETCCL_CHECKSUM=1 it
// carries the CRC32C of the payload; it ends with the message's call stamp (call_stamp.hpp), which the
// receiver compares with the stamp its receive expects. Wire (72 bytes, little-endian; bytes 0..39 are
// the piece fields of piece_fields.hpp, which the ucx transport's header shares):
//   0 u32 magic 'HCTP' | 4 u32 flags (bit 0: crc present) | 8 u64 piece number | 16 u64 message bytes
//   24 u64 piece bytes | 32 u32 crc32c of the payload (0 without the flag) | 36 u32 reserved (0)
//   40 call stamp (32 bytes)
// A message of 0 bytes travels as one header-only piece, so it is checked too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "transport/base/call_stamp.hpp"
#include "transport/base/piece_fields.hpp"

namespace hetccl::transport::tcp {

inline constexpr uint32_t kPieceMagic = 0x50544348;  // "HCTP"

/// The piece fields (flags, number, sizes, crc; pieceMismatch compares them with the expected piece) and
/// the call stamp.
struct PieceHeader : PieceFields {
  CallStampWords stamp{};  ///< raw words as sent (checked against the receive's by the worker)

  static constexpr size_t kWireBytes = kPieceFieldsBytes + kCallStampBytes;
  std::array<unsigned char, kWireBytes> encode() const;
  /// Checks the piece fields (readPieceFields: magic, known flags, the reserved word, ...); on failure
  /// returns nullopt and says why in `problem`.
  static std::optional<PieceHeader> decode(const unsigned char* wire, std::string& problem);
};

}  // namespace hetccl::transport::tcp
