// What the piece headers of the tcp and ucx transports (tcp_piece.hpp, ucx_wire.hpp) start with: the
// piece's place on its connection and in its message, and its optional checksum. A receiver checks them
// before any payload byte lands in its buffer. Wire (40 bytes, little-endian):
//   0 u32 magic (the transport's) | 4 u32 flags (bit 0: crc present) | 8 u64 piece number
//   16 u64 message bytes | 24 u64 piece bytes | 32 u32 crc32c of the payload (0 without the flag)
//   36 u32 reserved (0)
// Each transport's header goes on with its own fields (tcp: the call stamp; ucx: the connection token,
// then the call stamp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/base/wire_codec.hpp"

namespace hetccl::transport {

inline constexpr uint32_t kPieceHasCrc = 1u << 0;
inline constexpr size_t kPieceFieldsBytes = 40;
/// readPieceFields' limit for a transport whose pieces may have any size within their message.
inline constexpr uint64_t kAnyPieceBytes = UINT64_MAX;

struct PieceFields {
  uint32_t flags = 0;
  uint64_t number = 0;        ///< pieces are numbered 0, 1, ... over the whole connection
  uint64_t messageBytes = 0;  ///< the sender's message size
  uint64_t pieceBytes = 0;    ///< payload bytes of this piece
  uint32_t crc = 0;           ///< crc32c of the payload when flags has kPieceHasCrc, else 0
};

/// Writes the 40 bytes: `magic`, the fields of `f`, a zero reserved word.
void writePieceFields(WireWriter& w, uint32_t magic, const PieceFields& f);

/// Reads the 40 bytes into `out` and checks them: the magic (else "not a <what> (magic 0x...)"), known
/// flags, the reserved word zero, no crc without its flag, a piece no longer than its message nor than
/// `maxPieceBytes`. False when a check fails; `problem` then says which.
bool readPieceFields(WireReader& r, uint32_t magic, const char* what, uint64_t maxPieceBytes, PieceFields& out,
                     std::string& problem);

/// "" when `got` is the piece the receiver expects, else what differs, worded for an error message
/// (a message size mismatch says that the ranks posted different sizes).
std::string pieceMismatch(const PieceFields& got, uint64_t number, uint64_t messageBytes, uint64_t pieceBytes);

}  // namespace hetccl::transport
