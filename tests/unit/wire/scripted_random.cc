// Deterministic nonces for the handshake vectors: this test binary defines OpenSSL's RAND_bytes, so the
// bootstrap's randomBytes() (src/bootstrap/crypto.cc, statically linked here) calls this one. While bytes
// are scripted (scriptRandom), calls take them in order; otherwise, and for anything else in the
// process, it forwards to libcrypto's RAND_bytes. Nothing of this exists outside unit_wire.
#include "scripted_random.hpp"

#include <dlfcn.h>

#include <cstring>
#include <deque>
#include <mutex>

namespace hetccl::test::wire {
namespace {

std::mutex mu;
std::deque<unsigned char> scripted;
size_t served = 0;

}  // namespace

void scriptRandom(const Bytes& bytes) {
  std::lock_guard<std::mutex> lock(mu);
  scripted.assign(bytes.begin(), bytes.end());
  served = 0;
}

size_t scriptedLeft() {
  std::lock_guard<std::mutex> lock(mu);
  return scripted.size();
}

void clearScriptedRandom() {
  std::lock_guard<std::mutex> lock(mu);
  scripted.clear();
}

}  // namespace hetccl::test::wire

extern "C" int RAND_bytes(unsigned char* buf, int num) {
  using namespace hetccl::test::wire;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (num > 0 && !scripted.empty()) {
      if (scripted.size() < static_cast<size_t>(num)) return 0;  // a script too short is a test bug: fail loudly
      for (int i = 0; i < num; ++i) {
        buf[i] = scripted.front();
        scripted.pop_front();
      }
      served += static_cast<size_t>(num);
      return 1;
    }
  }
  using Fn = int (*)(unsigned char*, int);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "RAND_bytes"));
  return real ? real(buf, num) : 0;
}
