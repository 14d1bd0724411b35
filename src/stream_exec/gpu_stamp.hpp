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
/// stamp (0x...)").
std::string describeStamp(const uint64_t words[4]);

}  // namespace hetccl::stream_exec
