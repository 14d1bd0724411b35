// The call stamp: 32 bytes that travel with every cross-rank message piece (host transports) and every
// GPU ring slot, so the receiver can check that what arrives belongs to the call it is executing.
//
// Wire layout: four little-endian u64 words (a GPU writes them with 64-bit stream memory operations).
//   word0: bits 0-31 magic 0x48435331 ("HCS1"), bits 32-39 call kind, bits 40-47 data type,
//          bits 48-55 reduction operator, bits 56-63 flags (reserved, must be 0)
//   word1: call sequence number: per communicator, counts collective calls and groups identically on
//          every rank (so a message left over from an earlier call carries an older number)
//   word2: the sender's message bytes: the size of the whole message this piece belongs to
//   word3: bits 0-31 piece number (0, 1, ...): the engine numbers the messages of one call on one
//          connection (and the chunks of one send); bits 32-63: root + 1 of a rooted call (Broadcast,
//          Reduce), 0 otherwise (GPU ring slots: 0)
//
// Field meanings (plain small integers: this header depends on nothing else in hetccl):
//   kind: hetccl's algo::CollKind value (0 AllReduce .. 8 Recv) for a call of one operation, or
//         kCallKindGroup for a group of several operations (the ranks must have grouped the same
//         operations; the message sizes then tell groups apart).
//   type: the DataType value (NCCL's numbering) of the call, kNoType where the call has none (a group
//         of mixed types).
//   op:   the RedOpKind value (NCCL's numbering) of a reducing call, kNoOp otherwise.
// A receiver compares every field with the stamp it expects; matches() is that comparison.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hetccl::transport {

inline constexpr uint32_t kCallStampMagic = 0x48435331u;  // "HCS1"
inline constexpr size_t kCallStampBytes = 32;
inline constexpr uint8_t kCallKindGroup = 0xfe;  ///< a group of several operations
inline constexpr uint8_t kNoType = 0xff;
inline constexpr uint8_t kNoOp = 0xff;

struct CallStamp {
  uint8_t kind = kCallKindGroup;
  uint8_t type = kNoType;
  uint8_t op = kNoOp;
  uint64_t seq = 0;
  uint64_t bytes = 0;
  uint32_t piece = 0;
  int32_t root = -1;  ///< rooted calls only; -1 otherwise

  bool operator==(const CallStamp&) const = default;
};

using CallStampWords = std::array<uint64_t, 4>;

/// The stamp as the four wire words (host byte order; see encodeCallStamp for bytes).
CallStampWords callStampWords(const CallStamp& s) noexcept;
/// Writes the 32 wire bytes (little-endian words) to `out`.
void encodeCallStamp(const CallStamp& s, void* out) noexcept;

/// Parses 32 wire bytes. Returns nullopt when the magic is wrong, a reserved flag bit is set or the root
/// part of word3 is not a rank; then
/// `why` (when given) says which, e.g. "bad magic 0x0 (expected 0x48435331)".
std::optional<CallStamp> decodeCallStamp(const void* in, std::string* why = nullptr);
std::optional<CallStamp> decodeCallStampWords(const CallStampWords& w, std::string* why = nullptr);

/// True when `got` is the stamp `expected` names: every field equal.
inline bool matches(const CallStamp& got, const CallStamp& expected) noexcept { return got == expected; }

/// "AllReduce", "Send", "group", ...; "kind 77" outside the known values.
std::string callKindName(uint8_t kind);
/// "float32", ...; "" for kNoType; "type 77" outside the known values.
std::string callTypeName(uint8_t type);
/// "sum", ...; "" for kNoOp; "op 77" outside the known values.
std::string callOpName(uint8_t op);

/// The call a stamp names: "AllReduce #12 (4096 B, float32, sum)"; a root is added as ", root 2", a
/// piece other than 0 as ", piece 3".
std::string describeCall(const CallStamp& s);

/// The error text for a mismatch: "rank 3 sent AllReduce #12 (4096 B, float32, sum), this rank
/// expected Reduce #12 (4096 B, float32, sum)".
std::string callMismatchMessage(int peerRank, const CallStamp& got, const CallStamp& expected);

}  // namespace hetccl::transport
