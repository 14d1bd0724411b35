// shm: the transport between ranks of one host. One POSIX shm segment per connection holds a
// single-producer / single-consumer ring (HETCCL_SHM_SLOTS slots of HETCCL_SHM_SLOT_BYTES).
//
// Lifecycle of a segment:
//  * listen() draws a random 128-bit prefix; the Handle carries it (nothing is created yet).
//  * connect() (sender) creates "/hetccl-<prefix>-<token>-<from>-<to>" with O_CREAT|O_EXCL and mode 0600,
//    initialises the ring and returns at once (it never waits for accept()).
//  * accept() (receiver) polls for that name until the deadline, checks owner/mode and the header
//    (magic, version, geometry, ranks, token), maps it and unlinks the name at once, so a crash leaks
//    nothing. The sender's destructor unlinks too if the name is still there; accept() unlinks on timeout.
// A dead peer is noticed through its pid (PeerInfo::pid; see process_liveness.hpp).
#pragma once

#include <memory>

#include "transport/base/transport.hpp"

namespace hetccl::transport {

/// The shm transport. canConnect() is true for two ranks with the same host id.
std::unique_ptr<Transport> makeShmTransport();

}  // namespace hetccl::transport
