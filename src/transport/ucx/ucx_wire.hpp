// What the ucx transport puts on the wire besides the payload, and its Handle. Fixed-size little-endian
// records, versioned and validated field by field, written with the codec the tcp transport uses too
// (wire_codec.hpp); committed vectors: tests/data/wire_vectors/ucx_*.hex.
//
//  * Handle: the peer's UCP listener address (a sockaddr; UCX's connection manager -- tcp here, rdmacm
//    with RDMA NICs -- connects to it), as address_handle.hpp lays it out: u32 magic 'UCXH', u16 version 1,
//    u16 family (4/6), u16 port, 16 address bytes, u32 IPv6 scope id.
//  * Hello: the first thing on every connection, sent by the connecting side over the endpoint's UCP
//    stream (per endpoint, so the listener knows which endpoint said it): u32 magic 'HCUH', u16 version,
//    u16 reserved (0), i32 from rank, i32 to rank, u64 token (24 bytes).
//  * Piece header: every message is cut into pieces of at most kPieceBytes; each piece is one tagged
//    header message and (unless empty) one tagged payload message. Header (80 bytes; bytes 0..39 are the
//    piece fields of piece_fields.hpp, as in the tcp header):
//      0 u32 magic 'HCUP' | 4 u32 flags (bit 0: crc) | 8 u64 piece number | 16 u64 message bytes
//      24 u64 piece bytes | 32 u32 crc32c of the payload (0 without the flag) | 36 u32 reserved (0)
//      40 u64 connection token | 48 call stamp (32 bytes)
//    The receiver posts the payload's receive only after the header checked out, so a foreign or
//    mismatched message never lands in the caller's buffer.
//  * Tags (64 bits): sender rank (20 bits) | 20 bits of the connection token | 24 bits: 2 * piece
//    number + (0 header, 1 payload), modulo 2^24. Tag matching is per UCP worker (one per communicator):
//    the sender rank keeps the connections arriving at one worker apart, the token bits keep a stale or
//    foreign sender's messages from matching, the piece bits order the pieces (they wrap after 8 M
//    pieces; far fewer are ever in flight).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "net/socket.hpp"
#include "transport/base/call_stamp.hpp"
#include "transport/base/piece_fields.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::transport::ucx {

inline constexpr uint32_t kHelloMagic = 0x48554348;  // "HCUH"
inline constexpr uint16_t kHelloVersion = 1;
inline constexpr uint32_t kPieceMagic = 0x50554348;  // "HCUP"
/// Largest piece (bytes). Part of the wire protocol: both ends cut messages alike.
inline constexpr size_t kPieceBytes = size_t{1} << 20;

struct Hello {
  int32_t fromRank = -1;
  int32_t toRank = -1;
  uint64_t token = 0;

  static constexpr size_t kWireBytes = 24;
  std::array<unsigned char, kWireBytes> encode() const;
  /// Checks magic, version, the reserved field and ranks >= 0; on failure nullopt and `problem` says why.
  static std::optional<Hello> decode(const unsigned char* wire, std::string& problem);
};

/// The piece fields (flags, number, sizes, crc), the connection's token and the call stamp.
struct PieceHeader : PieceFields {
  uint64_t token = 0;
  CallStampWords stamp{};

  static constexpr size_t kWireBytes = kPieceFieldsBytes + 8 + kCallStampBytes;
  std::array<unsigned char, kWireBytes> encode() const;
  /// Checks the piece fields (readPieceFields: magic, flags, reserved word, crc flag, a piece of at most
  /// kPieceBytes within its message); on failure nullopt and `problem` says why.
  static std::optional<PieceHeader> decode(const unsigned char* wire, std::string& problem);
};

/// Pieces of a message of `bytes` bytes (1 for an empty message: a header-only piece).
inline size_t pieceCount(size_t bytes) { return bytes == 0 ? 1 : (bytes + kPieceBytes - 1) / kPieceBytes; }

/// UCP tags of a connection: the sender's rank in the top 20 bits (connections from different ranks never
/// share a tag), and below them 44 bits counting from a secret start. UCP matches tags across the whole
/// worker, also for endpoints whose hello has not been checked yet (an endpoint is closed within 5 s
/// without a valid one): such a stranger would have to guess 44 bits derived from the connection token to
/// land bytes in a posted receive (and a forged header still fails its full-token check).
inline constexpr uint64_t kTagCounterMask = (uint64_t{1} << 44) - 1;
/// The tag of the connection from `fromRank` with `token` before its first piece (rank bits + start).
uint64_t tagBase(int fromRank, uint64_t token);
/// Tag of piece `number`'s header (payload = false) or payload (payload = true): the start advanced by
/// 2 * number (+ 1), modulo 2^44 -- unique within the connection for 2^43 pieces.
inline uint64_t pieceTag(uint64_t base, uint64_t number, bool payload) {
  return (base & ~kTagCounterMask) | ((base + 2 * number + (payload ? 1 : 0)) & kTagCounterMask);
}

Handle encodeAddressHandle(const net::SocketAddress& address);
/// Throws InvalidArgument when the handle is not a ucx handle.
net::SocketAddress decodeAddressHandle(const Handle& handle);

}  // namespace hetccl::transport::ucx
