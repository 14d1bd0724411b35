// tcp specifics: the listener survives hostile or broken clients, sorts sockets of several peers, and
// the hello and handle records are validated.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/config.hpp"
#include "core/error.hpp"
#include "net/socket.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "transport/tcp/tcp_striping.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport_harness.hpp"

namespace hetccl::transport::testing {
namespace {

net::SocketAddress addressOf(const Listener& l) { return tcp::decodeAddressHandle(l.handle()); }

net::Socket rawClient(const Listener& l) { return net::Socket::connect(addressOf(l), Deadline::afterMs(5000)); }

void sendHello(const net::Socket& s, const tcp::Hello& h) {
  auto wire = h.encode();
  s.sendAll(wire.data(), wire.size(), Deadline::afterMs(5000), "listener");
}

/// Checks that `link` carries a message both ways of its intended direction.
void expectWorks(Link& link) {
  auto data = patternBuffer(42, 300000);
  EXPECT_TRUE(transfer(link, data) == data);
}

TEST(Tcp, HostileClientsBeforeTheRealPeerDoNotDisturbAccept) {
  auto t = makeTcpTransport();
  PeerInfo sender = localRank(0), receiver = localRank(1);
  uint64_t token = freshToken();
  Link link;
  link.listener = t->listen(receiver);

  net::Socket garbage = rawClient(*link.listener);
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  garbage.sendAll(junk, sizeof junk, Deadline::afterMs(5000), "listener");
  net::Socket wrongToken = rawClient(*link.listener);
  sendHello(wrongToken, tcp::Hello{0, 1, 0, 1, token ^ 0xdead});
  net::Socket wrongReceiver = rawClient(*link.listener);
  sendHello(wrongReceiver, tcp::Hello{0, 1, 0, 9, token});
  net::Socket halfOpen = rawClient(*link.listener);  // connects, sends a few bytes, then nothing
  halfOpen.sendAll("HC", 2, Deadline::afterMs(5000), "listener");
  net::Socket silent = rawClient(*link.listener);

  link.send = t->connect(link.listener->handle(), ConnectInfo{sender, receiver, token, nullptr}, Deadline::afterMs(5000));
  link.recv = t->accept(*link.listener, ConnectInfo{receiver, sender, token, nullptr}, Deadline::afterMs(5000));
  expectWorks(link);
}

TEST(Tcp, SocketsOfOtherPeersWaitForTheirOwnAccept) {
  auto t = makeTcpTransport();
  PeerInfo receiver = localRank(0);
  auto listener = t->listen(receiver);
  uint64_t token = freshToken();
  std::vector<Link> links(3);
  for (int peer = 1; peer <= 3; ++peer)  // every connect first, as the communicator does
    links[peer - 1].send = t->connect(listener->handle(), ConnectInfo{localRank(peer), receiver, token, nullptr},
                                      Deadline::afterMs(5000));
  for (int peer = 3; peer >= 1; --peer)  // accepted in another order
    links[peer - 1].recv = t->accept(*listener, ConnectInfo{receiver, localRank(peer), token, nullptr},
                                     Deadline::afterMs(5000));
  for (int peer = 1; peer <= 3; ++peer) {
    auto data = patternBuffer(peer, 100000 + peer);
    EXPECT_TRUE(transfer(links[peer - 1], data) == data) << "from rank " << peer;
  }
}

TEST(Tcp, AcceptTimesOutNamingTheMissingPeer) {
  auto t = makeTcpTransport();
  auto listener = t->listen(localRank(0));
  try {
    t->accept(*listener, ConnectInfo{localRank(0), localRank(5), freshToken(), nullptr}, Deadline::afterMs(100));
    FAIL() << "accept without a sender must time out";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(e.peer(), 5);
    EXPECT_NE(std::string(e.what()).find("rank 5"), std::string::npos) << e.what();
  }
}

TEST(Tcp, PeerClosingMidMessageIsAPeerError) {
  auto t = makeTcpTransport();
  Link link = connectPair(*t, 0, 1);
  auto data = patternBuffer(1, 1000);
  Request s = link.send->isend(data.data(), data.size());
  ASSERT_TRUE(waitDone(*link.send, s));
  link.send.reset();  // closes every socket after 1000 of the 2000 expected bytes
  std::vector<unsigned char> buf(2000);
  Request r = link.recv->irecv(buf.data(), buf.size());
  Deadline d = Deadline::afterMs(10000);
  try {
    while (!d.expired()) ASSERT_FALSE(link.recv->test(r));
    FAIL() << "EOF was not reported";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 0);
    EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
  }
}

TEST(Tcp, OddSocketCountStillStripesCorrectly) {
  setenv("HETCCL_TCP_SOCKETS", "3", 1);
  reloadConfig();
  auto t = makeTcpTransport();
  Link link = connectPair(*t, 0, 1);
  unsetenv("HETCCL_TCP_SOCKETS");
  reloadConfig();
  for (size_t bytes : {size_t{1}, size_t{200000}, size_t{3} << 20}) {
    auto data = patternBuffer(bytes, bytes);
    EXPECT_TRUE(transfer(link, data) == data) << bytes << " bytes";
  }
}

TEST(TcpWire, HelloRoundTripsAndRejectsBadFields) {
  tcp::Hello h{2, 4, 7, 3, 0x0123456789abcdefull};
  auto wire = h.encode();
  ASSERT_EQ(wire.size(), 26u);
  EXPECT_EQ(wire[0], 0x48);  // magic, little-endian
  std::string problem;
  auto back = tcp::Hello::decode(wire.data(), problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->socketIndex, 2);
  EXPECT_EQ(back->socketCount, 4);
  EXPECT_EQ(back->fromRank, 7);
  EXPECT_EQ(back->toRank, 3);
  EXPECT_EQ(back->token, 0x0123456789abcdefull);
  for (auto bad : {tcp::Hello{4, 4, 7, 3, 1}, tcp::Hello{0, 0, 7, 3, 1}, tcp::Hello{0, 17, 7, 3, 1},
                   tcp::Hello{0, 1, -1, 3, 1}}) {
    auto w = bad.encode();
    EXPECT_FALSE(tcp::Hello::decode(w.data(), problem));
  }
  wire[4] = 99;  // version
  EXPECT_FALSE(tcp::Hello::decode(wire.data(), problem));
}

TEST(TcpWire, HandleRoundTripsAndForeignHandlesAreRejected) {
  auto a = net::SocketAddress::parse("10.1.2.3:4567");
  EXPECT_EQ(tcp::decodeAddressHandle(tcp::encodeAddressHandle(a)).toString(), "10.1.2.3:4567");
  auto b = net::SocketAddress::parse("[::1]:80");
  EXPECT_EQ(tcp::decodeAddressHandle(tcp::encodeAddressHandle(b)).toString(), "[::1]:80");
  Handle garbage;
  garbage.bytes.fill(0x41);
  EXPECT_THROW(tcp::decodeAddressHandle(garbage), InvalidArgument);
}

TEST(TcpWire, StripingPiecesAreMultiplesOf64AndCoverTheMessage) {
  EXPECT_EQ(tcp::pieceCount(0, 4), 0u);
  EXPECT_EQ(tcp::pieceCount(1, 4), 1u);
  EXPECT_EQ(tcp::pieceBytes(1, 4), tcp::kMinPieceBytes);
  for (size_t bytes : {size_t{65537}, size_t{1} << 20, size_t{16777217}})
    for (size_t n : {size_t{1}, size_t{3}, size_t{4}}) {
      size_t p = tcp::pieceBytes(bytes, n);
      EXPECT_EQ(p % 64, 0u);
      EXPECT_GE(p * tcp::pieceCount(bytes, n), bytes);
      EXPECT_LT(p * (tcp::pieceCount(bytes, n) - 1), bytes);
      EXPECT_LE(tcp::pieceCount(bytes, n), n);
    }
}

}  // namespace
}  // namespace hetccl::transport::testing
