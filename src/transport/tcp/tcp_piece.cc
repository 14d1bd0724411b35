#include "transport/tcp/tcp_piece.hpp"

namespace hetccl::transport::tcp {

std::array<unsigned char, PieceHeader::kWireBytes> PieceHeader::encode() const {
  std::array<unsigned char, kWireBytes> out{};
  WireWriter w(out.data(), out.size());
  writePieceFields(w, kPieceMagic, *this);
  for (uint64_t word : stamp) w.put<uint64_t>(word);
  return out;
}

std::optional<PieceHeader> PieceHeader::decode(const unsigned char* wire, std::string& problem) {
  WireReader r(wire, kWireBytes);
  PieceHeader h;
  if (!readPieceFields(r, kPieceMagic, "piece header", kAnyPieceBytes, h, problem)) return std::nullopt;
  for (uint64_t& word : h.stamp) word = r.get<uint64_t>();
  return h;
}

}  // namespace hetccl::transport::tcp
