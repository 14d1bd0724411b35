// End-to-end integrity of the pieces the shm and tcp transports move (HETCCL_CHECKSUM), and the test
// hook that corrupts pieces on purpose.
//
// With HETCCL_CHECKSUM=1 the sender computes a CRC32C of every piece (a tcp piece or an shm slot) before
// it leaves and sends it along; the receiver recomputes it over the bytes that arrived and fails the
// connection with a PeerError naming the link (sender rank and host, receiver, piece) on a mismatch.
// A receiver that wants checksums fails as clearly when its sender sends none (the ranks disagree about
// HETCCL_CHECKSUM); a sender's checksums are always verified.
#pragma once

#include <atomic>
#include <cstddef>

namespace hetccl::transport {

/// HETCCL_CHECKSUM of the process configuration (read when a connection is made).
bool checksumsEnabled();

namespace testing {

/// Test only: the next `pieces` pieces sent by any shm or tcp connection of this process get one bit
/// flipped on the way (after their checksum was computed), as a faulty link or memory would.
void corruptNextPieces(int pieces) noexcept;

/// Transports: true (once per armed piece) when the piece being sent now must be corrupted.
bool takeCorruption() noexcept;

}  // namespace testing
}  // namespace hetccl::transport
