// Scripted random bytes for the handshake vectors (scripted_random.cc interposes OpenSSL's RAND_bytes).
#pragma once

#include <cstddef>

#include "wire_vectors.hpp"

namespace hetccl::test::wire {

/// The next RAND_bytes calls of this process take `bytes`, in order, until they are used up.
void scriptRandom(const Bytes& bytes);
/// Scripted bytes not yet taken.
size_t scriptedLeft();
void clearScriptedRandom();

}  // namespace hetccl::test::wire
