#include "transport/tcp/tcp_piece.hpp"

#include "core/error.hpp"

namespace hetccl::transport::tcp {
namespace {

template <typename T>
void put(unsigned char* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i));
}
template <typename T>
T get(const unsigned char* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

std::array<unsigned char, PieceHeader::kWireBytes> PieceHeader::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  put<uint32_t>(out.data(), kPieceMagic);
  put<uint32_t>(out.data() + 4, flags);
  put<uint64_t>(out.data() + 8, number);
  put<uint64_t>(out.data() + 16, messageBytes);
  put<uint64_t>(out.data() + 24, pieceBytes);
  put<uint32_t>(out.data() + 32, crc);
  for (size_t i = 0; i < stamp.size(); ++i) put<uint64_t>(out.data() + 40 + 8 * i, stamp[i]);
  return out;
}

std::optional<PieceHeader> PieceHeader::decode(const unsigned char* wire, std::string& problem) {
  if (uint32_t magic = get<uint32_t>(wire); magic != kPieceMagic) {
    problem = concat("not a piece header (magic 0x", std::hex, magic, ")");
    return std::nullopt;
  }
  PieceHeader h;
  h.flags = get<uint32_t>(wire + 4);
  h.number = get<uint64_t>(wire + 8);
  h.messageBytes = get<uint64_t>(wire + 16);
  h.pieceBytes = get<uint64_t>(wire + 24);
  h.crc = get<uint32_t>(wire + 32);
  for (size_t i = 0; i < h.stamp.size(); ++i) h.stamp[i] = get<uint64_t>(wire + 40 + 8 * i);
  if (h.flags & ~kPieceHasCrc) problem = concat("unknown piece flags 0x", std::hex, h.flags);
  else if (get<uint32_t>(wire + 36) != 0) problem = "reserved word of a piece header is not zero";
  else if (!(h.flags & kPieceHasCrc) && h.crc != 0) problem = "piece header has a crc without its flag";
  else if (h.pieceBytes > h.messageBytes) problem = concat("piece of ", h.pieceBytes, " bytes in a message of ", h.messageBytes);
  else return h;
  return std::nullopt;
}

std::string pieceMismatch(const PieceHeader& got, uint64_t number, uint64_t messageBytes, uint64_t pieceBytes) {
  if (got.messageBytes != messageBytes)
    return concat("the sender sent a message of ", got.messageBytes, " bytes where this rank posted a receive of ",
                  messageBytes, " bytes: the ranks called different collectives, counts or types (HETCCL_CHECK_CALLS=1 "
                  "names both calls)");
  if (got.number != number) return concat("piece ", got.number, " arrived where piece ", number, " was expected");
  if (got.pieceBytes != pieceBytes)
    return concat("piece ", number, " has ", got.pieceBytes, " bytes, expected ", pieceBytes);
  return "";
}

}  // namespace hetccl::transport::tcp
