// The UCX set-up of a connection between agents of different hosts (src/agent/net_link.hpp) over real
// loopback sockets and UCX (its tcp transport here): a peer that sends a malformed set-up frame is refused,
// and one that closes the connection after its frame without ever connecting fails the set-up at once
// instead of at the deadline. Skipped where libucp is unavailable. ~0.5 s. (The suite name holds "Ucx":
// scripts/test.sh runs such tests in the asan stage without LeakSanitizer, as every test that loads UCX.)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

#include "agent/byte_codec.hpp"
#include "agent/handshake.hpp"
#include "agent/net_link.hpp"
#include "agent/wire.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "net/socket.hpp"
#include "socket_pair.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace hetccl::agent {
namespace {

using Pair = SocketPair;

class AgentUcxSetUp : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("UCX_TLS", "tcp", 0);
    const std::string why = transport::ucxUnavailableReason();
    if (!why.empty()) GTEST_SKIP() << "ucx unavailable: " << why;
  }
};

std::vector<unsigned char> frame(const transport::Handle& handle, int32_t rank, uint64_t token) {
  ByteWriter w;
  w.put<uint32_t>(kNetMagic);
  w.bytes(handle.bytes);
  w.put<int32_t>(rank);
  w.put<uint64_t>(token);
  return w.data();
}

TEST_F(AgentUcxSetUp, APeerThatClosesAfterItsFrameWithoutConnectingFailsTheSetUpAtOnce) {
  Pair p;
  NetLinks links("decode");
  // The fake target answers with a real UCX listener's address, never connects back, then closes.
  auto transport = transport::makeUcxTransport();
  PeerInfo self;
  self.rank = 0;
  auto listener = transport->listen(self);
  auto target = std::async(std::launch::async, [&] {
    (void)recvHandshakeFrame(p.target, Deadline::afterMs(5000), "initiator");
    sendHandshakeFrame(p.target, frame(listener->handle(), 5, 42), Deadline::afterMs(5000), "initiator");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    p.target.close();
  });
  const auto t0 = std::chrono::steady_clock::now();
  try {
    (void)links.initiate(p.initiator, Deadline::afterMs(30000), "agent 'prefill'", "host-b");
    FAIL() << "the set-up succeeded without the peer connecting";
  } catch (const PeerError& e) {
    EXPECT_NE(std::string(e.what()).find("agent 'prefill'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("closed during the ucx set-up"), std::string::npos) << e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0) << "waited for the deadline (30 s) instead of seeing the peer go";
  target.get();
}

TEST_F(AgentUcxSetUp, AMalformedFrameIsRefusedNamingThePeer) {
  for (const int32_t rank : {0, -1, 1 << 20}) {
    SCOPED_TRACE(rank);
    Pair p;
    NetLinks links("decode");
    transport::Handle handle{};
    auto target = std::async(std::launch::async, [&] {
      (void)recvHandshakeFrame(p.target, Deadline::afterMs(5000), "initiator");
      sendHandshakeFrame(p.target, frame(handle, rank, 42), Deadline::afterMs(5000), "initiator");
    });
    EXPECT_THROW(
        {
          try {
            (void)links.initiate(p.initiator, Deadline::afterMs(5000), "agent 'prefill'", "host-b");
          } catch (const PeerError& e) {
            EXPECT_NE(std::string(e.what()).find("malformed ucx set-up"), std::string::npos) << e.what();
            throw;
          }
        },
        PeerError);
    target.get();
  }
}

}  // namespace
}  // namespace hetccl::agent
