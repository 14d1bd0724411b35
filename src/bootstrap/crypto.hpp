// The few cryptographic primitives the bootstrap needs, all from OpenSSL: random bytes, HMAC-SHA256 and a
// constant-time comparison. Keys passed here are secrets: never log them.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>

#include "bootstrap/unique_id.hpp"

namespace hetccl::bootstrap {

using Secret = std::array<unsigned char, kSecretBytes>;
using Mac = std::array<unsigned char, 32>;

/// Initialises OpenSSL (its exit-time cleanup is registered with atexit by then) and this file's exit
/// handler, which runs before OpenSSL's cleanup and makes every later call here throw SystemError instead
/// of touching freed OpenSSL state. Code that must use cryptography during process exit (the rendezvous
/// root's linger) registers its own exit handler after calling this, so that handler runs first.
void cryptoReady();

/// Fills `out` with cryptographically strong random bytes (RAND_bytes). Throws SystemError when the
/// generator is not seeded.
void randomBytes(std::span<unsigned char> out);

/// HMAC-SHA256 of the concatenation of `parts`, keyed by `key`. Throws InternalError if OpenSSL fails.
Mac hmacSha256(const Secret& key, std::initializer_list<std::span<const unsigned char>> parts);

/// Constant-time equality of two MACs (CRYPTO_memcmp).
bool macEqual(const Mac& a, const Mac& b) noexcept;

}  // namespace hetccl::bootstrap
