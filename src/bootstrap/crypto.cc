#include "bootstrap/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <memory>

#include "core/error.hpp"

namespace hetccl::bootstrap {

void randomBytes(std::span<unsigned char> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
    throw SystemError("RAND_bytes failed: the system random generator is not available");
}

Mac hmacSha256(const Secret& key, std::initializer_list<std::span<const unsigned char>> parts) {
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
