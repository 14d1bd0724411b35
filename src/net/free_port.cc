#include "net/free_port.hpp"

#include <fstream>
#include <random>
#include <string>

#include "core/error.hpp"

namespace hetccl::net {
namespace {

/// The lowest port the kernel hands out by itself (bind to port 0, outgoing connections): the start of
/// net.ipv4.ip_local_port_range (32768 where it cannot be read).
int ephemeralLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (range >> low >> high && low > 1024 && low <= 65535) return low;
  return 32768;
}

}  // namespace

SocketAddress freeLoopbackAddress() {
  // Below the ephemeral range no other process's bind(0) or outgoing connection takes the port between
  // this probe and rank 0's bind; only a program binding that very port could. (A port from the
  // ephemeral range was taken by a concurrent job's connection now and then in CI.)
  const int low = ephemeralLow();
  if (low > 10000) {
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<int> port(10000, low - 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
      try {
        Listener probe(SocketAddress::parse("127.0.0.1:" + std::to_string(port(rng))), 1);
        return probe.address();  // the probe closes here, leaving the port free for rank 0
      } catch (const SystemError&) {
        // in use: try another
      }
    }
  }
  Listener probe(SocketAddress::parse("127.0.0.1:0"), 1);
  return probe.address();
}

}  // namespace hetccl::net
