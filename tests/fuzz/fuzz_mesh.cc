// Fuzz target: the bootstrap mesh's reader facing a connected rank that sends arbitrary bytes (after
// authentication a peer is trusted to be in the job, not to be bug-free). The frames land in the
// mesh's queues; a malformed one must end in a failure naming the peer, never a crash.
// Properties: queued messages are delivered exactly (or reported as the wrong size); after them the
// end of the stream is an error naming rank 1 at once.
#include <cstdlib>

#include "bootstrap/mesh.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

using namespace hetccl;
using namespace hetccl::bootstrap;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > fuzz::kMaxSocketInput) return 0;
  fuzz::Input in(data, size);
  const uint8_t wantBytes = in.byte();
  fuzz::SocketPair pair;
  if (!pair.feed(in.rest())) std::abort();
  pair.closePeerWrites();

  std::vector<PeerInfo> peers(2);
  for (int r = 0; r < 2; ++r) {
    peers[r].rank = r;
    peers[r].hostId = r == 0 ? "fuzz-self" : "fuzz-peer";
    peers[r].domain = "host";
  }
  std::vector<net::Socket> sockets(2);
  sockets[1] = std::move(pair.ours);
  Mesh mesh(0, peers, std::move(sockets));
  const std::vector<int> members{0, 1};

  // Messages queued on comm 0 / tag 0 are delivered first (or reported as the wrong size); once the
  // queue is empty the peer's end of stream, malformed frame or goodbye must end the wait at once.
  std::vector<unsigned char> buf(wantBytes);
  for (size_t frames = 0; frames <= size / kFrameHeaderBytes + 1; ++frames) {
    try {
      mesh.recv(1, FrameType::Data, 0, 0, buf.data(), buf.size(), Deadline::afterMs(5000), members);
    } catch (const TimeoutError&) {
      std::abort();  // the reader got stuck: a closed peer must never make anyone wait
    } catch (const PeerError& e) {
      if (e.peer() != 1) std::abort();  // every error about this connection names rank 1
      return 0;
    }
  }
  std::abort();  // more messages delivered than the input could hold
  return 0;
}
