// The call stamp of a GPU ring piece: the four little-endian 64-bit words of hetccl's call stamp (the
// format of host transport messages, docs/HELPERS layout: magic + kind/type/op, call sequence, message
// bytes, piece number), written into the piece's slot header by the sender's stream and compared by the
// receiver's stream before it uses the data (HETCCL_GPU_OP_STAMP_WRITE / STAMP_CHECK).
//
// On GPU rings the fields mean:
//   word0  magic 0x48435331 | call kind << 32 | data type << 40 | reduction op << 48 (0xff: none) | 0 << 56.
//          They describe the group: its only operation, else its first collective; a group of sends and
//          receives only is stamped as "send" (the receiver's Recv matches the peer's Send).
//   word1  the group's number among the groups this rank queued that use this ring (the sender counts
//          the groups that send to the receiver, the receiver those that receive from the sender; eager
//          and captured alike, counted when the call is made; a captured call keeps its number on every
//          replay). Both ends count the same groups when their calls match, also when ranks make different
//          numbers of calls (point-to-point between other pairs is legal), which a per-rank call number
//          would report as a mismatch.
//   word2  bytes the group moves on this ring (the sender's total to this receiver), so that ranks
//          whose counts differ disagree on the first piece already.
//   word3  the piece's number on this ring within the group (0, 1, ...); kLatencyPathCall in the latency
//          path's stamps (ll_path.hpp: word1 is then its sequence number, word2 the call's bytes).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "algo/coll_op.hpp"

namespace hetccl::stream_exec {

inline constexpr uint64_t kStampMagic = 0x48435331;  // "HCS1"
inline constexpr uint64_t kStampNoOp = 0xff;
/// word3 of a call on the latency path (no ring, no pieces).
inline constexpr uint64_t kLatencyPathCall = ~uint64_t{0};

/// word0 for a group of operations (see above).
uint64_t groupStampWord0(std::span<const algo::CollOp> ops);

/// "allreduce #12 (float32 sum), 4096 bytes on this ring, piece 3", #12 being word1 (or "not a call
/// stamp (0x...)"; for unloggedStamp's words, the call that is no longer in a ring's group log).
std::string describeStamp(const uint64_t words[4]);

// The piece token: what a full slot's state word holds, and the one value the receiving stream waits for
// (one stream memory operation instead of one per stamp word: each costs about a microsecond of the
// stream's time, bench/results/stream_chain_probe_h200_2026-11-30). Bits 0-10: the slot + 1 (never 0, so a
// token is never the empty state), bits 11-26: the piece's number (word3) modulo 2^16, bits 27-63: a 37-bit
// tag of the piece's group (words 0-2, groupTag). Two pieces of different groups share a token only when
// their tags collide (2^-37 per comparison): the one way a mismatched call can go unreported.
inline constexpr uint32_t kMaxTokenSlots = 0x7ff - 1;

/// The 37-bit tag of a group's stamp words 0-2 (a fixed 64-bit mix; part of the ring's shared layout).
uint64_t groupTag(uint64_t word0, uint64_t word1, uint64_t word2);
/// The token of the piece stamped `words` in slot `slot` (< kMaxTokenSlots).
uint64_t pieceToken(const uint64_t words[4], uint32_t slot);
/// A token's slot (may be out of range for a token that is not one), piece number modulo 2^16 and tag.
inline uint32_t tokenSlot(uint64_t token) { return static_cast<uint32_t>(token & 0x7ff) - 1; }
inline uint64_t tokenPiece(uint64_t token) { return (token >> 11) & 0xffff; }
inline uint64_t tokenTag(uint64_t token) { return token >> 27; }
/// The stamp words a mismatch report holds for a token whose group the ring's log no longer has: word0 0,
/// word1 the token.
void unloggedStamp(uint64_t token, uint64_t words[4]);

}  // namespace hetccl::stream_exec
