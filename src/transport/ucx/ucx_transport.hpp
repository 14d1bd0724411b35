// ucx: the transport between hosts over UCX's UCP API (libucp.so.0, opened at run time: ucp_api.hpp).
//
// listen() creates a UCP listener (ucp_listener_create) on net::chooseLocalAddress() (HETCCL_SOCKET_IFNAME),
// ephemeral port; the Handle carries that sockaddr (ucx_wire.hpp). A sockaddr rather than the worker's
// address: it fits the 128-byte Handle whatever devices the host has (a worker address grows with every
// transport and device UCX finds: several hundred bytes with IB + tcp + shm), and UCX's connection
// manager (tcp sockets here; rdmacm with RDMA NICs) gives the listener one connection request per
// connection, which maps onto accept(). connect() creates an endpoint to that address and sends the
// hello (ucx_wire.hpp) over the endpoint's UCP stream; it never waits for the peer. The listener turns
// every connection request into an endpoint and reads its hello within kHelloTimeoutMs; garbage, a
// wrong token, an unknown rank or no hello closes the endpoint (logged at INFO), valid endpoints of
// other peers wait for their own accept(). Data: ucx_conn.hpp.
#pragma once

#include <memory>
#include <string>

#include "transport/base/transport.hpp"

namespace hetccl::transport {

/// The ucx transport; canConnect() is always true (it is chosen by transport/links/link_set.cc). Throws SystemError,
/// with the reason, when UCX is unavailable in this process (ucxUnavailableReason()).
std::unique_ptr<Transport> makeUcxTransport();

/// "" when libucp loads, resolves and creates a UCP context in this process; else why not (decided once
/// per process, logged at INFO).
std::string ucxUnavailableReason();

/// "UCX 1.13.1 (libucp.so.0); memory types: host" or the reason it is unavailable (hetccl-info).
std::string ucxDescription();

}  // namespace hetccl::transport
