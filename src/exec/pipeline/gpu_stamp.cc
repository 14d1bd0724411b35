#include "exec/pipeline/gpu_stamp.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "core/types.hpp"

namespace hetccl::stream_exec {
namespace {

bool reducing(algo::CollKind k) {
  return k == algo::CollKind::AllReduce || k == algo::CollKind::Reduce || k == algo::CollKind::ReduceScatter;
}
bool pointToPoint(algo::CollKind k) { return k == algo::CollKind::Send || k == algo::CollKind::Recv; }

}  // namespace

uint64_t groupStampWord0(std::span<const algo::CollOp> ops) {
  if (ops.empty()) return kStampMagic;
  const algo::CollOp* first = &ops[0];
  for (const algo::CollOp& op : ops)
    if (!pointToPoint(op.kind)) {
      first = &op;
      break;
    }
  const auto kind = static_cast<uint64_t>(pointToPoint(first->kind) ? algo::CollKind::Send : first->kind);
  const uint64_t redop = reducing(first->kind) ? static_cast<uint64_t>(first->op.kind) : kStampNoOp;
  return kStampMagic | (kind & 0xff) << 32 | (static_cast<uint64_t>(first->type) & 0xff) << 40 | (redop & 0xff) << 48;
}

uint64_t groupTag(uint64_t word0, uint64_t word1, uint64_t word2) {
  uint64_t h = 0x6865746363'6c2d74ull;  // "hetccl-t"
  for (const uint64_t w : {word0, word1, word2}) {
    h ^= w;
    h *= 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
  }
  return h >> 27;
}

uint64_t pieceToken(const uint64_t words[4], uint32_t slot) {
  return groupTag(words[0], words[1], words[2]) << 27 | (words[3] & 0xffff) << 11 | (uint64_t{slot} + 1);
}

void unloggedStamp(uint64_t token, uint64_t words[4]) {
  words[0] = 0;
  words[1] = token;
  words[2] = words[3] = 0;
}

std::string describeStamp(const uint64_t words[4]) {
  if (words[0] == 0 && words[1] != 0) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(words[1]));
    return concat("piece ", tokenPiece(words[1]), " (modulo 65536) of a group no longer in the ring's group log (token ",
                  hex, ")");
  }
  if ((words[0] & 0xffffffffu) != kStampMagic) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(words[0]));
    return concat("not a call stamp (", hex, ")");
  }
  const auto kind = static_cast<algo::CollKind>((words[0] >> 32) & 0xff);
  const auto type = static_cast<DataType>((words[0] >> 40) & 0xff);
  const uint64_t redop = (words[0] >> 48) & 0xff;
  std::string what = pointToPoint(kind) ? "send/recv" : algo::collKindName(kind);
  std::string detail = dataTypeName(type);
  if (redop != kStampNoOp) detail += concat(" ", redOpName(static_cast<RedOpKind>(redop)));
  if (words[3] == kLatencyPathCall) return concat(what, " #", words[1], " (", detail, "), ", words[2], " bytes on the latency path");
  return concat(what, " #", words[1], " (", detail, "), ", words[2], " bytes on this ring, piece ", words[3]);
}

}  // namespace hetccl::stream_exec
