// The agent protocol on one connection. A connection carries one initiator's requests to one target
// (the agent that accepted it); the target never starts anything on it. So an agent that both reads and
// is read from has two connections to that peer, one per direction of initiative.
//
// Handshake (handshake.hpp), every message a u32 length then its bytes (at most kMaxHandshakeBytes):
//   Hello      I -> T  magic, version, I's incarnation, the incarnation I expects T to be, nonce_i,
//                      I's name, flags (kWantWindows)
//   Challenge  T -> I  status (Ok, or NotThisIncarnation / BadVersion: then closed), T's incarnation,
//                      nonce_t, MAC("target" | Hello | Challenge so far)
//   Proof      I -> T  the name of I's window towards T ("" none: created only now, T being authentic),
//                      MAC("initiator" | Hello | Challenge | that name)
//   Accept     T -> I  whether T mapped I's window, the name of T's window towards I ("" none)
//   Ready      I -> T  whether I mapped T's window
// T serves nothing and maps nothing before the Proof checked out; I sends nothing but the Hello before
// the Challenge's MAC did. MACs are HMAC-SHA256 under agentKey(secret) (metadata.hpp).
//
// Device copies by the target (peer_copy.hpp): I's Hello may carry kOfferPeerCopy (I can export its
// device memory); T's Accept then sets kAcceptPeerCopy in its first word (bit 0: T mapped I's window)
// when T will map I's allocations and copy between them and its own device memory itself. An agent
// that does not know these bits never sets them, so both ends of a connection agree.
//
// Payload over UCX (net_link.hpp): I's Hello may carry kOfferUcx (agents of different hosts, HETCCL_UCX
// allows it); T's Accept then sets kAcceptUcx when T allows it too. After Ready, I sends its UCX frame
// (kNetMagic), T answers with its own; both connect to the other's listener, then accept the other's
// connection. A connection with UCX carries every payload (and nothing else) over those two UCX
// connections, cut into the same pieces on both sides (payload.hpp).
//
// Requests (I -> T): a MsgHeader, then nranges WireRange (the target's side of each range), then
// notifBytes of notification, then for a Write the payload: the ranges' bytes in table order, over the
// socket or, when the connection has I's window, through it in chunks of at most a slot (payload.hpp).
//   Write   T checks every range, takes the payload into place (or drains it when a check failed),
//           queues the notification (if any) and only then answers a Reply: data before notification.
//   Read    T checks every range and answers a Reply; on Ok the payload follows (T's window or the socket).
//           A read with a notification is followed by a Notify from I once I has the data.
//   Notify  header + message; T queues it and answers a Reply.
// A Write or Read with kCopiedByTarget in its flags (only after kAcceptPeerCopy) carries no payload:
// after the notification comes a source section (peer_copy.hpp: I's allocations and where each range
// lies in them); T maps them, copies every range itself (complete before it answers), queues a write's
// notification, and answers; kStatusCannotCopy says it could not map them (I then sends the transfer
// again the ordinary way and stops asking on this connection).
//   Unmap   header (nranges 0) + a source section of one allocation: T closes its mapping of it (I
//           deregistered it and must be able to free it) and answers.
// Integers in the host's order (little-endian machines only, as every hetccl wire format).
#pragma once

#include <cstdint>

#include "rma/wire.hpp"

namespace hetccl::agent {

inline constexpr uint32_t kHelloMagic = 0x48474148;  // "HAGH"
inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr uint32_t kMsgMagic = 0x4d474148;  // "HAGM" on requests and replies
inline constexpr size_t kMaxHandshakeBytes = 4096;
inline constexpr uint32_t kWantWindows = 1;    ///< Hello flags
inline constexpr uint32_t kOfferPeerCopy = 2;  ///< Hello flags
inline constexpr uint32_t kOfferUcx = 4;       ///< Hello flags
inline constexpr uint32_t kAcceptWindowMapped = 1;  ///< Accept's first word
inline constexpr uint32_t kAcceptPeerCopy = 2;      ///< Accept's first word
inline constexpr uint32_t kAcceptUcx = 4;           ///< Accept's first word
/// The UCX set-up frame after Ready (net_link.hpp), each side one: magic, the listener's transport
/// Handle (128 bytes), the sender rank (i32) and token (u64) the other side must present.
inline constexpr uint32_t kNetMagic = 0x55474148;  // "HAGU"
inline constexpr uint32_t kCopiedByTarget = 1;  ///< MsgHeader flags
/// Reply status (beside rma::Status): the target could not map the initiator's allocations.
inline constexpr uint32_t kStatusCannotCopy = 100;
inline constexpr uint64_t kMaxRanges = uint64_t{1} << 22;
inline constexpr uint32_t kMaxNotif = 4096;

enum class HelloStatus : uint32_t { Ok = 0, NotThisIncarnation = 1, BadVersion = 2 };

enum class MsgType : uint32_t { Write = 1, Read = 2, Notify = 3, Unmap = 4 };

struct MsgHeader {
  uint32_t magic = kMsgMagic;
  uint32_t type = 0;  ///< MsgType
  uint64_t id = 0;
  uint64_t nranges = 0;
  uint64_t totalBytes = 0;
  uint32_t notifBytes = 0;
  uint32_t flags = 0;  ///< kCopiedByTarget
};
static_assert(sizeof(MsgHeader) == 40);

struct WireRange {
  uint32_t region = 0;
  uint32_t generation = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
static_assert(sizeof(WireRange) == 24);

struct Reply {
  uint32_t magic = kMsgMagic;
  uint32_t status = 0;  ///< rma::Status
  uint64_t id = 0;
  uint64_t badIndex = 0;     ///< the first range refused
  uint64_t regionBytes = 0;  ///< its region's size (OutOfBounds)
};
static_assert(sizeof(Reply) == 32);

}  // namespace hetccl::agent
