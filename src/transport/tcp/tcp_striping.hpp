// How a tcp connection spreads messages over its sockets. Both ends compute the same layout from the
// message sizes alone (the receiver posts the same sizes in the same order), so pieces carry no header.
//
//  * A message of B bytes over N sockets is cut into pieces of P = max(kMinPieceBytes, roundUp64(B / N))
//    bytes (the last piece is the tail); a 0-byte message has no pieces.
//  * Pieces are numbered across the whole connection; piece k travels on socket k mod N. Each socket
//    carries its pieces back to back, in order, so the receiver knows where every byte belongs.
//  * Every piece is preceded by a header (tcp_piece.hpp) the receiver checks: number, message size,
//    piece size, optional CRC32C. A 0-byte message is sent as one header-only piece (number k as usual).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hetccl::transport::tcp {

inline constexpr size_t kMinPieceBytes = 64 * 1024;

/// Piece size for a message of `bytes` over `sockets` sockets (a multiple of 64).
inline size_t pieceBytes(size_t bytes, size_t sockets) {
  size_t share = (bytes + sockets - 1) / sockets;
  return std::max(kMinPieceBytes, (share + 63) & ~size_t{63});
}

/// Number of pieces of a message of `bytes` bytes.
inline size_t pieceCount(size_t bytes, size_t sockets) {
  size_t p = pieceBytes(bytes, sockets);
  return (bytes + p - 1) / p;
}

}  // namespace hetccl::transport::tcp
