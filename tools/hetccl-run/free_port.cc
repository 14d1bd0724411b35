#include "hetccl-run/free_port.hpp"

namespace hetccl::run {

net::SocketAddress freeLoopbackAddress() {
  net::Listener probe(net::SocketAddress::parse("127.0.0.1:0"), 1);
  return probe.address();  // the probe closes here, leaving the port free for rank 0
}

}  // namespace hetccl::run
