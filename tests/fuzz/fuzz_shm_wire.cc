// Fuzz target: what an shm peer hands over: the listener's Handle (segment-name prefix, through the
// bootstrap) and the header of the ring segment it creates (read by the receiver before use).
// Properties: a handle that decodes yields a 32-digit lower-case hex prefix that re-encodes to the same
// bytes up to the terminator; a ring header that passes describes a layout that fits the segment.
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "fuzz_support.hpp"
#include "transport/shm/shm_handle.hpp"

using namespace hetccl;
using namespace hetccl::transport;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const std::string handleBytes = in.bytes(sizeof(Handle::bytes));
  Handle handle;
  std::memcpy(handle.bytes.data(), handleBytes.data(), handleBytes.size());
  try {
    std::string prefix = shm::decodeShmHandle(handle);
    if (prefix.size() != shm::kPrefixChars) std::abort();
    Handle again = shm::encodeShmHandle(prefix);
    if (std::memcmp(again.bytes.data(), handle.bytes.data(), 8 + shm::kPrefixChars + 1) != 0) std::abort();
  } catch (const InvalidArgument&) {
  }

  // A ring header as the sender wrote it, then the size of the segment the receiver mapped.
  alignas(64) unsigned char raw[sizeof(shm::RingHeader)] = {};
  const std::string headerBytes = in.bytes(sizeof raw);
  std::memcpy(raw, headerBytes.data(), headerBytes.size());
  const auto& header = *reinterpret_cast<const shm::RingHeader*>(raw);
  uint64_t segmentBytes = 0;
  for (int i = 0; i < 8; ++i) segmentBytes |= static_cast<uint64_t>(in.byte()) << (8 * i);
  shm::RingExpectation expect{header.segment.fromRank, header.segment.toRank, header.token, static_cast<size_t>(segmentBytes)};
  if (shm::ringHeaderProblem(header, expect).empty()) {
    shm::RingGeometry g = shm::RingGeometry::of(header.segment.slots, header.segment.slotBytes);
    // The last slot ends inside the segment, and the layout did not wrap around.
    if (g.dataOffset < g.infoOffset || g.totalBytes < g.dataOffset || g.totalBytes != segmentBytes ||
        (g.totalBytes - g.dataOffset) / header.segment.slotBytes != header.segment.slots)
      std::abort();
  }
  return 0;
}
