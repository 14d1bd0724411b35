// Two connected loopback sockets (the unit tests of src/agent's connection protocol): `initiator` connected
// to a listener on 127.0.0.1, `target` the accepted end.
#pragma once

#include <future>

#include "core/deadline.hpp"
#include "net/socket.hpp"

namespace hetccl::agent {

struct SocketPair {
  net::Listener listener{net::SocketAddress::parse("127.0.0.1:0")};
  net::Socket initiator, target;
  SocketPair() {
    auto accepted = std::async(std::launch::async, [&] { return listener.accept(Deadline::afterMs(5000)); });
    initiator = net::Socket::connect(listener.address(), Deadline::afterMs(5000));
    target = accepted.get();
  }
};

}  // namespace hetccl::agent
