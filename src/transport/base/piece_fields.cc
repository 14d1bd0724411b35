#include "transport/base/piece_fields.hpp"

#include "core/error.hpp"

namespace hetccl::transport {

void writePieceFields(WireWriter& w, uint32_t magic, const PieceFields& f) {
  w.put<uint32_t>(magic).put<uint32_t>(f.flags).put<uint64_t>(f.number).put<uint64_t>(f.messageBytes);
  w.put<uint64_t>(f.pieceBytes).put<uint32_t>(f.crc).zeros(4);
}

bool readPieceFields(WireReader& r, uint32_t magic, const char* what, uint64_t maxPieceBytes, PieceFields& out,
                     std::string& problem) {
  if (const auto got = r.get<uint32_t>(); got != magic) {
    problem = concat("not a ", what, " (magic 0x", std::hex, got, ")");
    return false;
  }
  out.flags = r.get<uint32_t>();
  out.number = r.get<uint64_t>();
  out.messageBytes = r.get<uint64_t>();
  out.pieceBytes = r.get<uint64_t>();
  out.crc = r.get<uint32_t>();
  const bool reservedZero = r.zeros(4);
  if (out.flags & ~kPieceHasCrc) problem = concat("unknown piece flags 0x", std::hex, out.flags);
  else if (!reservedZero) problem = "reserved word of a piece header is not zero";
  else if (!(out.flags & kPieceHasCrc) && out.crc != 0) problem = "piece header has a crc without its flag";
  else if (out.pieceBytes > out.messageBytes || out.pieceBytes > maxPieceBytes)
    problem = concat("piece of ", out.pieceBytes, " bytes in a message of ", out.messageBytes);
  else return true;
  return false;
}

std::string pieceMismatch(const PieceFields& got, uint64_t number, uint64_t messageBytes, uint64_t pieceBytes) {
  if (got.messageBytes != messageBytes)
    return concat("the sender sent a message of ", got.messageBytes, " bytes where this rank posted a receive of ",
                  messageBytes, " bytes: the ranks called different collectives, counts or types (HETCCL_CHECK_CALLS=1 "
                  "names both calls)");
  if (got.number != number) return concat("piece ", got.number, " arrived where piece ", number, " was expected");
  if (got.pieceBytes != pieceBytes)
    return concat("piece ", number, " has ", got.pieceBytes, " bytes, expected ", pieceBytes);
  return "";
}

}  // namespace hetccl::transport
