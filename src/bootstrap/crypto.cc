#include "bootstrap/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "core/error.hpp"

namespace hetccl::bootstrap {
namespace {

// OpenSSL frees its state in its own exit handler (OPENSSL_cleanup, registered with atexit by
// OPENSSL_init_crypto); a thread that calls into it afterwards crashes (issue 27 item 1: the rendezvous
// root answering a late rank while rank 0's process exits). Every call below holds the gate shared;
// closeAtExit, registered right after OpenSSL's handler (so exit runs it first), takes it exclusively and
// closes it: no thread is inside OpenSSL once it returns, and later calls throw instead.
struct Gate {
  std::shared_mutex mutex;
  bool closed = false;
};

Gate& gate() {
  static Gate* g = new Gate;  // never destroyed: used until the last exit handler
  return *g;
}

void closeAtExit() {
  std::unique_lock lock(gate().mutex);
  gate().closed = true;
}

std::shared_lock<std::shared_mutex> enter() {
  static const bool ready = [] {
    // Options 0 would return at once without registering OpenSSL's exit handler (it checks only that
    // every option asked for is done); any real option runs the registration first.
    if (OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CRYPTO_STRINGS, nullptr) != 1)
      throw SystemError("OpenSSL failed to initialise");
    std::atexit(&closeAtExit);  // after OpenSSL's own exit handler: runs before it
    return true;
  }();
  (void)ready;
  std::shared_lock lock(gate().mutex);
  if (gate().closed)
    throw SystemError("the process is exiting: no cryptography after OpenSSL's exit-time cleanup (handshake refused)");
  return lock;
}

}  // namespace

void cryptoReady() { (void)enter(); }

void randomBytes(std::span<unsigned char> out) {
  auto open = enter();
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
    throw SystemError("RAND_bytes failed: the system random generator is not available");
}

Mac hmacSha256(const Secret& key, std::initializer_list<std::span<const unsigned char>> parts) {
  auto open = enter();
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr), &EVP_MAC_free);
  if (!mac) throw InternalError("OpenSSL: HMAC is not available");
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac.get()), &EVP_MAC_CTX_free);
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
  if (!ctx || EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1)
    throw InternalError("OpenSSL: HMAC-SHA256 initialisation failed");
  for (const auto& part : parts)
    if (EVP_MAC_update(ctx.get(), part.data(), part.size()) != 1) throw InternalError("OpenSSL: HMAC update failed");
  Mac out{};
  size_t len = 0;
  if (EVP_MAC_final(ctx.get(), out.data(), &len, out.size()) != 1 || len != out.size())
    throw InternalError("OpenSSL: HMAC final failed");
  return out;
}

bool macEqual(const Mac& a, const Mac& b) noexcept { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace hetccl::bootstrap
