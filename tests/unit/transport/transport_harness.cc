#include "transport_harness.hpp"

#include <cstdlib>
#include <thread>

#include "transport/shm/shm_transport.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace hetccl::transport::testing {

std::unique_ptr<Transport> makeTransport(const std::string& name) {
  if (name == "shm") return makeShmTransport();
  if (name == "tcp") return makeTcpTransport();
  // ucx over the UCX transports of the environment's UCX_TLS, over UCX's tcp only, or over all UCX
  // finds (shared memory, cma, tcp between processes of one host; UCX_TLS=all). UCX reads UCX_TLS when a
  // worker is created. (UCX_TLS=sm,self alone cannot connect through a sockaddr listener in UCX 1.13.)
  if (name == "ucx_tcp") setenv("UCX_TLS", "tcp", 1);
  if (name == "ucx_all") setenv("UCX_TLS", "all", 1);
  if (name == "ucx" || name == "ucx_tcp" || name == "ucx_all") return makeUcxTransport();  // throws when unavailable
  ADD_FAILURE() << "unknown transport " << name;
  return nullptr;
}

uint64_t freshToken() {
  static std::atomic<uint32_t> counter{1};
  return (static_cast<uint64_t>(static_cast<uint32_t>(getpid())) << 32) | counter.fetch_add(1);
}

PeerInfo localRank(int rank) {
  PeerInfo p;
  p.rank = rank;
  p.hostId = "testhost";
  p.domain = "host";
  p.pid = getpid();
  p.protocolVersion = 1;
  return p;
}

Link connectPair(Transport& t, int from, int to, const std::atomic<bool>* abortFlag) {
  Link link;
  PeerInfo sender = localRank(from), receiver = localRank(to);
  uint64_t token = freshToken();
  link.listener = t.listen(receiver);
  link.send = t.connect(link.listener->handle(), ConnectInfo{sender, receiver, token, abortFlag},
                        Deadline::afterMs(10000));
  link.recv = t.accept(*link.listener, ConnectInfo{receiver, sender, token, abortFlag}, Deadline::afterMs(10000));
  return link;
}

std::vector<unsigned char> patternBuffer(uint64_t seed, size_t bytes) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = patternByte(seed, i);
  return v;
}

std::vector<unsigned char> transfer(Link& link, const std::vector<unsigned char>& data) {
  std::vector<unsigned char> out(data.size(), 0xee);
  std::thread receiver([&] {
    Request r = link.recv->irecv(out.data(), out.size());
    waitDone(*link.recv, r);
  });
  Request s = link.send->isend(data.data(), data.size());
  waitDone(*link.send, s);
  receiver.join();
  return out;
}

}  // namespace hetccl::transport::testing
