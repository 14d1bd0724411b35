// Bootstrap frames: every message after the handshake is one frame,
//   header (16 bytes, little-endian): u32 magic 'HCBF' | u16 version | u16 type | u32 tag | u32 length
//   followed by `length` payload bytes (at most kMaxFramePayload).
// Every header field is validated on receipt; a bad frame is a protocol error naming the sender.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap {

inline constexpr uint32_t kFrameMagic = 0x46424348;  // bytes 'H','C','B','F'
inline constexpr uint16_t kFrameVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr uint32_t kMaxFramePayload = 16u << 20;

enum class FrameType : uint16_t {
  Descriptor = 1,  ///< rank -> root: this rank's descriptor
  Table = 2,       ///< root -> rank: every rank's descriptor, in rank order
  Error = 3,       ///< root -> rank: init failed; payload is the message (UTF-8, <= 4 KiB); tag says
                   ///< why: 0 inconsistent job, kErrorRankFailed|r rank r failed, kErrorRankMissing|r
                   ///< rank r never joined before the deadline
  Data = 4,        ///< rank <-> rank: Bootstrap::send/recv; payload = u32 comm id | u32 zero | bytes
  Collective = 5,  ///< rank <-> rank: allGather/barrier; tag = per-comm call sequence; payload as Data
  Goodbye = 6,     ///< rank -> rank: the sender finalized comm id (payload = u32 comm id | u32 zero; tag 0)
  Heartbeat = 7,   ///< rank -> rank: "still here" (empty payload, tag 0), every heartbeat period
  Notice = 8,      ///< rank -> rank: the sender failed because of rank R (payload = u32 comm | u32 zero |
                   ///< i32 R | reason, UTF-8, <= 1 KiB; tag 0)
};

/// Error frame tags (low 24 bits: the rank at fault).
inline constexpr uint32_t kErrorRankFailed = 1u << 30;
inline constexpr uint32_t kErrorRankMissing = 1u << 31;
inline constexpr uint32_t kErrorRankMask = (1u << 24) - 1;

struct Frame {
  FrameType type = FrameType::Data;
  uint32_t tag = 0;
  std::vector<unsigned char> payload;
};

/// Encodes header + payload into one buffer (throws InvalidArgument when the payload is too large).
std::vector<unsigned char> encodeFrame(FrameType type, uint32_t tag, const unsigned char* payload, size_t bytes);

/// Validates a received header; returns the error text ("" when valid). `maxPayload` <= kMaxFramePayload.
std::string checkFrameHeader(const unsigned char* header, uint32_t maxPayload);

/// Incremental frame parser for non-blocking sockets: call readFrom() when the socket is readable.
class FrameReader {
 public:
  explicit FrameReader(uint32_t maxPayload = kMaxFramePayload) : maxPayload_(maxPayload) {}
  /// Reads what is available (never blocks). Returns a frame when one is complete. Throws PeerError on
  /// EOF or a malformed header (message starts with `peer`), SystemError on socket errors.
  std::optional<Frame> readFrom(const net::Socket& s, const std::string& peer);

 private:
  uint32_t maxPayload_;
  unsigned char header_[kFrameHeaderBytes] = {};
  size_t headerHave_ = 0;
  Frame frame_;
  size_t payloadHave_ = 0;
};

/// Blocking helpers (until `deadline`) for the rank <-> root exchange.
void sendFrame(const net::Socket& s, FrameType type, uint32_t tag, const std::vector<unsigned char>& payload,
               Deadline deadline, const std::string& peer);
Frame recvFrame(const net::Socket& s, uint32_t maxPayload, Deadline deadline, const std::string& peer);

}  // namespace hetccl::bootstrap
