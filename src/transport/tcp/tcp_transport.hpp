// tcp: the transport between ranks on different hosts.
//
// listen() binds one net::Listener (net::chooseLocalAddress(), ephemeral port); the Handle carries its
// address. connect() opens HETCCL_TCP_SOCKETS sockets to the peer's listener and sends a fixed hello on
// each (see tcp_hello.hpp); it never waits for the peer's accept(). accept() takes connections from the
// listener, validates each hello under its own short deadline (garbage, a wrong token or an unknown rank
// is closed and logged at INFO) and stashes valid sockets meant for other peers for their accept().
//
// Data: see tcp_striping.hpp (how a message is cut into pieces and spread over the sockets) and
// tcp_conn.hpp (one I/O thread per socket).
#pragma once

#include <memory>

#include "transport/base/transport.hpp"

namespace hetccl::transport {

/// The tcp transport. canConnect() is always true (any two ranks can reach each other over TCP).
std::unique_ptr<Transport> makeTcpTransport();

}  // namespace hetccl::transport
