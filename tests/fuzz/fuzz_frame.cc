// Fuzz target: bootstrap frames as the root and the mesh read them from a socket. The first input byte
// picks the largest payload accepted; the rest arrives on a socket pair in pieces whose sizes come from
// the input too, so the incremental FrameReader sees every split of headers and payloads.
// Properties: no crash, every accepted frame respects the limits, and the blocking reader (recvFrame)
// accepts exactly the same first frame.
#include <cstdlib>

#include "bootstrap/frame.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

using namespace hetccl;
using namespace hetccl::bootstrap;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > fuzz::kMaxSocketInput) return 0;
  fuzz::Input in(data, size);
  const uint32_t maxPayload = static_cast<uint32_t>(in.byte()) * 64;
  const std::string stream = in.rest();

  if (stream.size() >= kFrameHeaderBytes)
    (void)checkFrameHeader(reinterpret_cast<const unsigned char*>(stream.data()), maxPayload);

  // Incremental reader, fed in pieces of 1..16 bytes (sizes cycle through the stream's own bytes).
  fuzz::SocketPair pair;
  FrameReader reader(maxPayload);
  std::optional<Frame> firstIncremental;
  bool incrementalFailed = false;
  size_t off = 0;
  try {
    while (true) {
      if (off < stream.size()) {
        size_t piece = 1 + (static_cast<unsigned char>(stream[off]) & 15);
        if (!pair.feed(stream.substr(off, piece))) std::abort();
        off += piece;
      } else {
        pair.closePeerWrites();
      }
      while (auto f = reader.readFrom(pair.ours, "fuzz peer")) {
        if (f->payload.size() > maxPayload) std::abort();
        if (!firstIncremental) firstIncremental = std::move(f);
      }
    }
  } catch (const PeerError&) {  // end of stream or a malformed header: both end the connection
    incrementalFailed = !firstIncremental;
  }

  // Blocking reader on the same bytes must agree about the first frame.
  fuzz::SocketPair again;
  if (!again.feed(stream)) std::abort();
  again.closePeerWrites();
  try {
    Frame f = recvFrame(again.ours, maxPayload, Deadline::afterMs(1000), "fuzz peer");
    if (incrementalFailed || !firstIncremental || f.payload != firstIncremental->payload || f.tag != firstIncremental->tag ||
        f.type != firstIncremental->type)
      std::abort();
  } catch (const TimeoutError&) {
    std::abort();  // the peer closed: a reader must never wait for more
  } catch (const PeerError&) {
    if (firstIncremental) std::abort();
  }
  return 0;
}
