// The RMA wire protocol: messages on the RMA connections (one FIFO stream per direction and peer pair,
// never shared with collective traffic). Every message starts with a fixed WireHeader; a transfer of
// n > 1 ranges follows it with a table of n WireRange (the target's offsets), and data follows as
// pieces (piece_plan.hpp) whose sizes both sides derive from the table and the header's piece limits.
//   Put      initiator -> target: header, [table], pieces. The target checks the region, applies every
//            piece (or drains them on an error), then answers Ack. The next message is processed only
//            after that: a Notify behind puts is seen after their data is in place.
//   GetReq   initiator -> target: header, [table]. The target answers GetResp: header (status), and on
//            Ok the pieces.
//   Notify   header only (tag in `offset`).
//   Ack      target -> initiator: header (status, region size in `bytes`, the bad range).
//   Bye      the sender stops its RMA service (finalize/destroy): nothing more comes.
// Copied by the target (GPU ranks of one vendor on one host, peer_copy.cc): a Put or GetReq with
// kCopiedByTarget in `flags` carries, after its [table], a WireSource naming the initiator's device
// allocation and nranges uint64 source offsets in it, and no pieces. The target maps that allocation
// (peer_mappings.hpp), checks every source range against the mapping's size, copies device to device
// (Put: into its region; GetReq: out of it), completes the copies, and only then answers Ack / GetResp
// (which carries no pieces) and reads the next message: the ordering guarantee is the same.
//   Unmap    initiator -> target: header, WireSource (offsets: none). Sent when the initiator deregisters
//            a device registration whose allocation the target may have mapped; the target closes its
//            mapping of that allocation (if open) and answers Unmapped. The initiator's deregistration
//            waits for the answer: the vendors' runtimes leave freeing an allocation that another process
//            still maps undefined, and the application may free it as soon as deregistration returns.
//   Unmapped target -> initiator: header (the Unmap's id).
// Integers are in the host's order: every rank of a job runs on little-endian machines (x86-64,
// aarch64), as for the other wire formats of hetccl.
#pragma once

#include <cstdint>

namespace hetccl::rma {

inline constexpr uint32_t kWireMagic = 0x414d5248;  // "HRMA"

enum class MsgType : uint32_t { Put = 1, GetReq = 2, Notify = 3, Ack = 4, GetResp = 5, Bye = 6, Unmap = 7, Unmapped = 8 };

/// Outcome of a transfer at its target (Ack / GetResp).
enum class Status : uint32_t {
  Ok = 0,
  Stale = 1,        ///< the region was deregistered
  Unknown = 2,      ///< no such region was ever registered (a forged or corrupted reference)
  OutOfBounds = 3,  ///< a range lies outside the region
  Failed = 4,       ///< the target could not apply it (a device copy failed)
};

struct WireHeader {
  uint32_t magic = kWireMagic;
  uint32_t type = 0;        ///< MsgType
  uint64_t id = 0;          ///< the initiator's request id (Put, GetReq, Ack, GetResp, Unmap, Unmapped)
  uint32_t slot = 0;        ///< region (Put, GetReq)
  uint32_t generation = 0;
  uint64_t nranges = 0;     ///< ranges; 1: inline in offset/bytes, no table
  uint64_t totalBytes = 0;  ///< sum of the ranges' bytes
  uint64_t offset = 0;      ///< the one range's offset; Notify: the tag; Ack: the bad range's offset
  uint64_t bytes = 0;       ///< the one range's bytes; Ack/GetResp: the region's size
  uint64_t badBytes = 0;    ///< Ack/GetResp: the bad range's size
  uint32_t status = 0;      ///< Status (Ack, GetResp)
  uint32_t pieceMax = 0;    ///< piece limits of this transfer (Put, GetReq; the target answers with them)
  uint32_t packMax = 0;
  uint32_t flags = 0;       ///< kCopiedByTarget (Put, GetReq, GetResp)
};
static_assert(sizeof(WireHeader) == 80);

inline constexpr uint32_t kCopiedByTarget = 1;

/// The most ranges one Put/GetReq may carry (its table: 64 MiB); the target takes more as malformed, so
/// the initiator refuses a larger transfer at the call (RmaService::makeTransfer).
inline constexpr uint64_t kMaxWireRanges = uint64_t{1} << 22;

/// What the target of a kCopiedByTarget transfer maps: the vendor's IPC handle of the initiator's allocation.
struct WireSource {
  unsigned char handle[64] = {};
  uint64_t allocBytes = 0;  ///< as the initiator sees it (the target checks against its own mapping's size)
  uint64_t reserved = 0;
};
static_assert(sizeof(WireSource) == 80);

struct WireRange {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
static_assert(sizeof(WireRange) == 16);

}  // namespace hetccl::rma
