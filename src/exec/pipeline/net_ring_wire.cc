#include "exec/pipeline/net_ring_wire.hpp"

#include "core/error.hpp"
#include "transport/base/wire_codec.hpp"

namespace hetccl::stream_exec {

void encodeNetRingRecord(const NetRingRecord& r, unsigned char* out) {
  transport::WireWriter w(out, kNetRingRecordBytes);
  w.put<uint32_t>(kNetRingMagic).put<uint16_t>(kNetRingVersion).put<uint16_t>(static_cast<uint16_t>(r.kind));
  w.put<uint32_t>(r.slot).zeros(4).put<uint64_t>(r.bytes);
  for (uint64_t word : r.words) w.put<uint64_t>(word);
}

bool decodeNetRingRecord(const unsigned char* in, NetRingRecord& out, std::string& problem) {
  transport::WireReader r(in, kNetRingRecordBytes);
  if (!r.magicAndVersion(kNetRingMagic, kNetRingVersion, problem)) return false;
  const auto kind = r.get<uint16_t>();
  if (kind < static_cast<uint16_t>(NetRingKind::Piece) || kind > static_cast<uint16_t>(NetRingKind::Bye)) {
    problem = concat("unknown record kind ", kind);
    return false;
  }
  out.kind = static_cast<NetRingKind>(kind);
  out.slot = r.get<uint32_t>();
  if (!r.zeros(4)) {
    problem = "reserved field not zero";
    return false;
  }
  out.bytes = r.get<uint64_t>();
  for (uint64_t& word : out.words) word = r.get<uint64_t>();
  if (out.kind != NetRingKind::Piece && out.bytes != 0) {
    problem = concat("a record of kind ", kind, " announces ", out.bytes, " payload bytes");
    return false;
  }
  return true;
}

}  // namespace hetccl::stream_exec
