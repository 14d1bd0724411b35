// A loopback address with a port that is free right now and that no other process's bind(0) or outgoing
// connection will take: for a root rank 0 will start (hetccl-run), and for tests that need a fixed port.
#pragma once

#include "net/socket.hpp"

namespace hetccl::net {

/// 127.0.0.1 with a port that was free a moment ago: a random port below the kernel's ephemeral range
/// (net.ipv4.ip_local_port_range), which no bind(0) or outgoing connection of another process can take
/// before rank 0 binds it; if 64 tries find none free, one the kernel hands out (bind to port 0). The probe
/// binds, reads the port, closes. Throws SystemError.
SocketAddress freeLoopbackAddress();

}  // namespace hetccl::net
