// The two things an shm peer hands over that this side must parse: the listener's Handle (a random
// segment-name prefix) and the header of the ring segment the sender created. Both are validated field
// by field before anything is trusted; pure functions, so they can be fuzzed (tests/fuzz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/base/transport.hpp"
#include "transport/shm/shm_segment.hpp"

namespace hetccl::transport::shm {

/// Hex characters of the segment-name prefix a listener draws (128 random bits).
inline constexpr size_t kPrefixChars = 32;

/// Handle layout (host byte order: both ends are on one host): u32 magic 'HSHM' | u16 version |
/// u16 prefix length (32) | char prefix[32] (lower-case hex) | '\0' | zero up to 128 bytes.
Handle encodeShmHandle(const std::string& prefix);
/// The prefix of a valid shm handle. Throws InvalidArgument when the magic, version, length, the
/// characters or the terminator are wrong.
std::string decodeShmHandle(const Handle& handle);

/// What the receiver expects of a ring segment.
struct RingExpectation {
  int32_t fromRank;   ///< the sender (the peer)
  int32_t toRank;     ///< the receiver (this rank)
  uint64_t token;     ///< the connection token both ends derived through the bootstrap
  size_t segmentBytes;  ///< the size of the mapped segment
};

/// "" when the ring header is a published segment of kRingKind consistent with `expect`
/// (segmentProblem(): magic, version, geometry, size, ranks) and carries the expected token. Otherwise says
/// what is wrong. Reads only the header.
std::string ringHeaderProblem(const RingHeader& header, const RingExpectation& expect);

}  // namespace hetccl::transport::shm
