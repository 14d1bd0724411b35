// The progress thread's state of the RMA channel to one peer: the messages queued for it, what is being
// sent and received on its two connections (progress.cc). Only the progress thread touches a Channel,
// except `queue`, which callers append to under the service's mutex.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "rma/copy_engine.hpp"
#include "rma/memory_access.hpp"
#include "rma/peer_mappings.hpp"
#include "rma/piece_plan.hpp"
#include "rma/region_table.hpp"
#include "rma/request.hpp"
#include "rma/window.hpp"
#include "rma/wire.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::rma {

/// The window path's position in one message (its ranges' bytes end to end): the bytes through the
/// window so far, the first range not yet passed and where it starts in that stream, and the message's
/// size (summed once, at its first chunk).
struct WindowCursor {
  uint64_t done = 0;
  size_t range = 0;
  uint64_t start = 0;
  std::optional<uint64_t> total;
};

/// One message to send: header, optional table, optional pieces read from `src`.
struct OutMsg {
  WireHeader header;
  std::vector<WireRange> table;       ///< sent when header.nranges > 1
  unsigned char* src = nullptr;       ///< base of the pieces' source (a local registration or a region)
  MemKind srcKind = MemKind::Host;
  std::vector<uint64_t> srcOffsets;   ///< per range: where its bytes start at src
  std::vector<uint64_t> sizes;        ///< per range: bytes
  std::vector<unsigned char> source;  ///< kCopiedByTarget: WireSource + source offsets, sent after the table
  std::vector<Piece> pieces;
  std::optional<RegionRef> heldRegion;  ///< GetResp: released once every piece was sent
  std::shared_ptr<Request> request;     ///< Put/GetReq: failed if the message cannot be sent
};

/// The target's answer (Ack or GetResp) to transfer `id`: the access's status, the region's size and the
/// bad range, if any (a GetResp's pieces are added by the caller).
inline std::shared_ptr<OutMsg> answerTo(MsgType type, uint64_t id, const Access& a) {
  auto msg = std::make_shared<OutMsg>();
  msg->header.type = static_cast<uint32_t>(type);
  msg->header.id = id;
  msg->header.status = static_cast<uint32_t>(a.status);
  msg->header.bytes = a.regionBytes;
  msg->header.offset = a.badOffset;
  msg->header.badBytes = a.badBytes;
  return msg;
}

/// A posted isend and what must live until it completes.
struct SendInFlight {
  transport::Request r = 0;
  MemoryAccess::Buffer staging;
  std::shared_ptr<OutMsg> msg;
  bool lastOfMsg = false;
};

/// A posted irecv of a piece.
struct RecvInFlight {
  transport::Request r = 0;
  MemoryAccess::Buffer staging;  ///< received here and applied on completion; else received in place:
  size_t piece = 0;
  unsigned char* at = nullptr;   ///< where an in-place piece lands
  uint64_t bytes = 0;
};

/// The incoming transfer being received (Put at its target, GetResp at its initiator).
struct Incoming {
  bool active = false;
  bool isPut = false;
  WireHeader header;
  std::vector<uint64_t> dstOffsets, sizes;
  std::vector<Piece> pieces;
  size_t posted = 0, applied = 0;
  unsigned char* dst = nullptr;  ///< nullptr: drain (a refused put)
  MemKind dstKind = MemKind::Host;
  Access access;                 ///< Put: the target's check
  WindowCursor window;           ///< window path: how far the message has been copied out
  std::optional<RegionRef> held; ///< Put: released when done
  std::shared_ptr<Request> request;  ///< GetResp
};

struct Channel {
  std::deque<std::shared_ptr<OutMsg>> queue;  ///< guarded by the service's mutex

  // progress thread only
  transport::SendConn* send = nullptr;
  transport::RecvConn* recv = nullptr;
  /// A pair of ranks of one host (window.hpp): the pieces of each direction cross these instead of the
  /// connections (headers, tables and answers still take the connections).
  std::unique_ptr<Window> outWindow, inWindow;
  /// GPU ranks of one vendor on one host (peer_copy.cc): the peer maps this rank's device allocations and
  /// copies the data of this rank's transfers itself (peerCopies), and this rank does so for the peer's
  /// (mapped: its allocations mapped here; null when not).
  bool peerCopies = false;
  std::unique_ptr<PeerMappings> mapped;
  /// The window path's device copies (window_path.cc): the chunks copied into outWindow / out of inWindow
  /// whose copies are queued and that are not yet published / released, in order (each its event, nullptr
  /// for host copies, done at once), and how many were queued (event numbers). `windowCopies` is declared
  /// after the windows, so it is destroyed -- its queued copies waited for -- before they are unmapped.
  std::deque<void*> outQueued, inQueued;
  uint64_t outChunks = 0, inChunks = 0;
  std::unique_ptr<CopyEngine> windowCopies;
  WindowCursor windowOut;                       ///< how far sending.front() is through outWindow
  std::deque<std::shared_ptr<OutMsg>> sending;  ///< taken from queue, in order
  size_t nextPiece = 0;                         ///< of sending.front(), once its header is posted
  bool headerPosted = false;
  std::deque<SendInFlight> sendInFlight;

  enum class RecvPhase { Idle, Header, Table, Source, Pieces, NoteHeld, Closed } phase = RecvPhase::Idle;
  WireHeader header;
  transport::Request headerReq = 0, tableReq = 0, sourceReq = 0;
  std::vector<WireRange> table;
  std::vector<unsigned char> source;  ///< kCopiedByTarget: WireSource + source offsets
  Incoming in;
  std::deque<RecvInFlight> recvInFlight;
};

}  // namespace hetccl::rma
