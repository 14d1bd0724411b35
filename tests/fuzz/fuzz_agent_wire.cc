// Fuzz target: what an agent reads from outside (src/agent): metadata blobs (hetcclAgentLoadRemote) and
// the target side of a connection's handshake (what a stranger can send to an agent's listener).
// Properties: a blob that decodes is canonical (re-encoding gives the same bytes); no input completes a
// handshake (the fuzzer does not hold the secret), and the window callback never runs.
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <span>

#include "agent/handshake.hpp"
#include "agent/metadata.hpp"
#include "core/error.hpp"
#include "net/socket.hpp"

using namespace hetccl;
using namespace hetccl::agent;

namespace {

const bootstrap::Secret& key() {
  static const bootstrap::Secret k = [] {
    static const char s[] = "fuzzing agents' secret, 32 bytes";
    return agentKey(std::span(reinterpret_cast<const unsigned char*>(s), sizeof s - 1));
  }();
  return k;
}

void blob(const uint8_t* data, size_t size) {
  try {
    const Metadata m = decodeMetadata(std::span(data, size), key());
    const auto again = encodeMetadata(m, key());
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  } catch (const InvalidArgument&) {
  }
}

void handshake(const uint8_t* data, size_t size) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
  net::Socket ours(fds[0]), theirs(fds[1]);
  // The stranger's bytes, then EOF (they fit the socket buffer: inputs are capped below).
  (void)!::send(theirs.fd(), data, size, MSG_NOSIGNAL);
  ::shutdown(theirs.fd(), SHUT_WR);
  TargetSide side;
  side.self.fill(7);
  side.openOut = [](const std::string&) -> bool { std::abort(); };
  side.createBack = []() -> std::string { std::abort(); };
  try {
    (void)targetHandshake(ours, key(), side, Deadline::afterMs(2000), "fuzz");
    std::abort();  // completed without the secret
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  blob(data, size);
  handshake(data, size);
  return 0;
}
