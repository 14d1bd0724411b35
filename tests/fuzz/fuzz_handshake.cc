// Fuzz target: both sides of the bootstrap's HMAC handshake facing a peer that does not hold the
// secret. The first byte picks the side and the purpose; the rest is what the stranger sends.
// Property (the security promise): without the secret nobody completes the handshake, on either side;
// every failure is a clean exception or a Failed state, never a crash or a wait past the peer's close.
#include <cstdlib>

#include "bootstrap/handshake.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

using namespace hetccl;
using namespace hetccl::bootstrap;

namespace {

const Secret& secret() {
  static const Secret s = [] {
    Secret k{};
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<unsigned char>(0xa5 ^ (i * 29));
    return k;
  }();
  return s;
}

void serverSide(Purpose purpose, const std::string& stranger) {
  fuzz::SocketPair pair;
  ServerHandshake h(std::move(pair.ours), secret(), purpose, 0, [](int r) { return r > 0 && r < 1000; },
                    Deadline::afterMs(1000));
  if (!pair.feed(stranger)) std::abort();
  pair.closePeerWrites();
  for (int round = 0; round < 8; ++round) {
    ServerHandshake::Status s = h.progress();
    if (s == ServerHandshake::Status::Done) std::abort();  // a stranger got in
    if (s == ServerHandshake::Status::Failed) return;
  }
  // Still in progress after the stranger closed: only possible while its bytes are not all read yet.
  if (h.progress() == ServerHandshake::Status::InProgress && stranger.size() > kClientHelloBytes + kProofBytes)
    std::abort();
}

void clientSide(Purpose purpose, const std::string& stranger) {
  fuzz::SocketPair pair;
  if (!pair.feed(stranger)) std::abort();
  pair.closePeerWrites();
  try {
    authenticateAsClient(pair.ours, secret(), purpose, 3, 1, Deadline::afterMs(1000), "fuzz server");
    std::abort();  // accepted a server that cannot know the secret
  } catch (const TimeoutError&) {
    std::abort();  // the stranger closed: there is nothing to wait for
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > fuzz::kMaxSocketInput) return 0;
  fuzz::Input in(data, size);
  const uint8_t mode = in.byte();
  const Purpose purpose = (mode & 2) ? Purpose::Mesh : Purpose::Root;
  const std::string stranger = in.rest();
  if (mode & 1) clientSide(purpose, stranger);
  else serverSide(purpose, stranger);
  return 0;
}
