// The random part of the names of the shared-memory segments the stream pipeline creates on one host (GPU
// rings, latency-path boards): 16 random bytes as 32 hex digits, published through the bootstrap, so that
// two jobs (or two communicators) of one user never pick the same name and a name cannot be guessed.
#pragma once

namespace hetccl::stream_exec {

struct SegmentTag {
  char hex[33];  ///< 32 lowercase hex digits and a NUL
};

/// A fresh tag from getrandom. Throws SystemError when the kernel cannot give randomness.
SegmentTag randomSegmentTag();
/// Whether `t` (as received from a peer) is 32 lowercase hex digits and a NUL.
bool validSegmentTag(const SegmentTag& t);

}  // namespace hetccl::stream_exec
