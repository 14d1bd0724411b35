#include "transport/shm/shm_handle.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace hetccl::transport::shm {
namespace {

constexpr uint32_t kHandleMagic = 0x4d485348;  // "HSHM"
constexpr uint16_t kHandleVersion = 1;

struct HandleWire {
  uint32_t magic;
  uint16_t version;
  uint16_t prefixLength;
  char prefix[kPrefixChars + 1];
};
static_assert(sizeof(HandleWire) <= sizeof(Handle::bytes));

bool lowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

Handle encodeShmHandle(const std::string& prefix) {
  if (prefix.size() != kPrefixChars || !std::all_of(prefix.begin(), prefix.end(), lowerHex))
    throw InvalidArgument(concat("shm listen: segment prefix '", prefix, "' is not ", kPrefixChars, " hex digits"));
  HandleWire w;
  std::memset(&w, 0, sizeof w);  // the padding bytes too: the handle is read by another process
  w.magic = kHandleMagic;
  w.version = kHandleVersion;
  w.prefixLength = static_cast<uint16_t>(kPrefixChars);
  std::memcpy(w.prefix, prefix.data(), kPrefixChars);
  Handle h;
  std::memcpy(h.bytes.data(), &w, sizeof w);
  return h;
}

std::string decodeShmHandle(const Handle& handle) {
  HandleWire w;
  std::memcpy(&w, handle.bytes.data(), sizeof w);
  const bool hex = std::all_of(w.prefix, w.prefix + kPrefixChars, lowerHex);
  if (w.magic != kHandleMagic || w.version != kHandleVersion || w.prefixLength != kPrefixChars || !hex ||
      w.prefix[kPrefixChars] != '\0')
    throw InvalidArgument(concat("shm connect: the peer's handle is not a valid shm handle (magic 0x", std::hex,
                                 w.magic, std::dec, ", version ", w.version, ")"));
  return std::string(w.prefix, kPrefixChars);
}

std::string ringHeaderProblem(const RingHeader& h, const RingExpectation& expect) {
  std::string problem = segmentProblem(h.segment, kRingKind, expect.segmentBytes, expect.fromRank, expect.toRank);
  if (problem.empty() && h.token != expect.token) problem = "has another connection token";
  return problem;
}

}  // namespace hetccl::transport::shm
