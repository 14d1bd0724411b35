#include "transport/base/call_stamp.hpp"

#include <cstdio>
#include <iterator>

#include "core/types.hpp"

namespace hetccl::transport {
namespace {

// The names of algo::CollKind's values, in its order (the transport layer cannot include algo).
constexpr const char* kKindNames[] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                      "AlltoAll",  "AlltoAllv", "Send",   "Recv"};
constexpr uint64_t kFlagsMask = 0xffull << 56;

std::string hexString(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t loadLittleEndian(const unsigned char* p) noexcept {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void storeLittleEndian(uint64_t v, unsigned char* p) noexcept {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

CallStampWords callStampWords(const CallStamp& s) noexcept {
  uint64_t w0 = kCallStampMagic | (uint64_t{s.kind} << 32) | (uint64_t{s.type} << 40) | (uint64_t{s.op} << 48);
  return {w0, s.seq, s.bytes, uint64_t{s.piece} | (static_cast<uint64_t>(static_cast<uint32_t>(s.root + 1)) << 32)};
}

void encodeCallStamp(const CallStamp& s, void* out) noexcept {
  CallStampWords w = callStampWords(s);
  auto* p = static_cast<unsigned char*>(out);
  for (int i = 0; i < 4; ++i) storeLittleEndian(w[i], p + 8 * i);
}

std::optional<CallStamp> decodeCallStampWords(const CallStampWords& w, std::string* why) {
  uint32_t magic = static_cast<uint32_t>(w[0]);
  if (magic != kCallStampMagic) {
    if (why) *why = "bad call stamp magic " + hexString(magic) + " (expected " + hexString(kCallStampMagic) + ")";
    return std::nullopt;
  }
  if (w[0] & kFlagsMask) {
    if (why) *why = "call stamp has reserved flag bits set (" + hexString(w[0] >> 56) + ")";
    return std::nullopt;
  }
  const uint64_t rootPlusOne = w[3] >> 32;
  if (rootPlusOne > 0x7fffffffu) {
    if (why) *why = "call stamp names root " + std::to_string(rootPlusOne - 1) + ", not a rank";
    return std::nullopt;
  }
  CallStamp s;
  s.kind = static_cast<uint8_t>(w[0] >> 32);
  s.type = static_cast<uint8_t>(w[0] >> 40);
  s.op = static_cast<uint8_t>(w[0] >> 48);
  s.seq = w[1];
  s.bytes = w[2];
  s.piece = static_cast<uint32_t>(w[3]);
  s.root = static_cast<int32_t>(rootPlusOne) - 1;
  return s;
}

std::optional<CallStamp> decodeCallStamp(const void* in, std::string* why) {
  const auto* p = static_cast<const unsigned char*>(in);
  CallStampWords w;
  for (int i = 0; i < 4; ++i) w[i] = loadLittleEndian(p + 8 * i);
  return decodeCallStampWords(w, why);
}

std::string callKindName(uint8_t kind) {
  if (kind < std::size(kKindNames)) return kKindNames[kind];
  if (kind == kCallKindGroup) return "group";
  return "kind " + std::to_string(kind);
}

std::string callTypeName(uint8_t type) {
  if (type == kNoType) return "";
  if (!isValidDataType(type)) return "type " + std::to_string(type);
  return dataTypeName(static_cast<DataType>(type));
}

std::string callOpName(uint8_t op) {
  if (op == kNoOp) return "";
  if (op > static_cast<int>(RedOpKind::PreMulSum)) return "op " + std::to_string(op);
  return redOpName(static_cast<RedOpKind>(op));
}

std::string describeCall(const CallStamp& s) {
  std::string out = callKindName(s.kind) + " #" + std::to_string(s.seq) + " (" + std::to_string(s.bytes) + " B";
  if (std::string t = callTypeName(s.type); !t.empty()) out += ", " + t;
  if (std::string o = callOpName(s.op); !o.empty()) out += ", " + o;
  if (s.root >= 0) out += ", root " + std::to_string(s.root);
  if (s.piece != 0) out += ", piece " + std::to_string(s.piece);
  return out + ")";
}

std::string callMismatchMessage(int peerRank, const CallStamp& got, const CallStamp& expected) {
  return "rank " + std::to_string(peerRank) + " sent " + describeCall(got) + ", this rank expected " +
         describeCall(expected);
}

}  // namespace hetccl::transport
