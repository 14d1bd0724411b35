// A loopback address with a port that is free right now, for the root rank 0 will start.
#pragma once

#include "net/socket.hpp"

namespace hetccl::run {

/// 127.0.0.1 with a port the kernel just handed out: binds port 0, reads the port, closes. Another
/// process could take the port before rank 0 binds it; the window is short. Throws SystemError.
net::SocketAddress freeLoopbackAddress();

}  // namespace hetccl::run
