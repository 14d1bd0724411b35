// The socket layer: address parsing, connect/accept, exact I/O, EOF and deadline errors.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "net/socket.hpp"

namespace hetccl::net {
namespace {

TEST(SocketAddress, ParsesAndPrintsIpv4AndIpv6) {
  EXPECT_EQ(SocketAddress::parse("10.1.2.3:4567").toString(), "10.1.2.3:4567");
  EXPECT_EQ(SocketAddress::parse("10.1.2.3:4567").port(), 4567);
  EXPECT_EQ(SocketAddress::parse("[::1]:80").toString(), "[::1]:80");
  EXPECT_TRUE(SocketAddress::parse("[::1]:80").isLoopback());
  EXPECT_TRUE(SocketAddress::parse("127.0.0.5:1").isLoopback());
  EXPECT_FALSE(SocketAddress::parse("10.0.0.1:1").isLoopback());
  EXPECT_TRUE(SocketAddress::parse("localhost:9").isLoopback());
  SocketAddress a = SocketAddress::parse("1.2.3.4:0");
  a.setPort(99);
  EXPECT_EQ(a.toString(), "1.2.3.4:99");
}

TEST(SocketAddress, RejectsMalformedText) {
  for (const char* bad : {"1.2.3.4", "1.2.3.4:", "1.2.3.4:70000", "1.2.3.4:x", ":80", "[::1:80", "::1:80"})
    EXPECT_THROW(SocketAddress::parse(bad), InvalidArgument) << bad;
}

TEST(Socket, ChooseLocalAddressGivesAnIpWithPortZero) {
  SocketAddress a = chooseLocalAddress();
  EXPECT_EQ(a.port(), 0);
  EXPECT_TRUE(a.storage.ss_family == AF_INET || a.storage.ss_family == AF_INET6);
}

std::vector<InterfaceAddress> fakeInterfaces() {
  return {{"lo", SocketAddress::parse("127.0.0.1:0")},   {"eth0", SocketAddress::parse("10.0.0.1:0")},
          {"eth10", SocketAddress::parse("10.0.1.1:0")}, {"docker0", SocketAddress::parse("172.17.0.1:0")},
          {"ib0", SocketAddress::parse("[fd00::1]:0")}};
}

std::string chosen(const std::string& filter) { return chooseLocalAddressFrom(fakeInterfaces(), filter).toString(); }

// NCCL's syntax holds for every entry of the list: '^' excludes them all (loopback included, no silent
// fallback to it), '=' exact, prefix otherwise (issue 12 item 10).
TEST(InterfaceFilter, EveryEntryOfAnExclusionListIsExcluded) {
  EXPECT_THROW(chosen("^lo,eth,docker,ib"), InvalidArgument);
  EXPECT_THROW(chosen("^lo,eth0,eth10,docker0,ib0"), InvalidArgument);
  EXPECT_EQ(chosen("^lo,eth,ib"), "172.17.0.1:0");
  EXPECT_EQ(chosen("^eth0,docker"), "10.0.1.1:0");       // prefix eth0 excludes eth0, not eth10
  EXPECT_EQ(chosen("^=eth0,=eth1,docker"), "10.0.1.1:0");  // exact: eth10 stays
  EXPECT_EQ(chosen("^=eth1,docker"), "10.0.0.1:0");
  EXPECT_EQ(chosen("^eth,docker,ib"), "127.0.0.1:0");     // lo not excluded: loopback is allowed
  EXPECT_EQ(chosen("^eth,docker"), "[fd00::1]:0");        // a non-loopback IPv6 before loopback
}

TEST(InterfaceFilter, ExactAndPrefixEntries) {
  EXPECT_EQ(chosen("eth1"), "10.0.1.1:0");
  EXPECT_THROW(chosen("=eth1,docker"), InvalidArgument);  // a leading '=' makes every entry exact
  EXPECT_EQ(chosen("=eth,docker0"), "172.17.0.1:0");
  EXPECT_EQ(chosen("eth1,=docker"), "10.0.1.1:0");
  EXPECT_EQ(chosen("ib,eth0"), "10.0.0.1:0");         // IPv4 preferred among those that pass
  EXPECT_EQ(chosen("lo"), "127.0.0.1:0");
  EXPECT_THROW(chosen("=eth"), InvalidArgument);
  EXPECT_THROW(chosen("wlan"), InvalidArgument);
  EXPECT_THROW(chosen("^"), InvalidArgument);
  EXPECT_THROW(chosen(","), InvalidArgument);
  try {
    chosen("^lo,eth0,eth10,docker0,ib0");
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("excludes every interface"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eth10"), std::string::npos) << e.what();
  }
}

TEST(Socket, ConnectSendRecvAndEofNamesThePeer) {
  Listener l(SocketAddress::parse("127.0.0.1:0"));
  ASSERT_NE(l.address().port(), 0);
  Socket client = Socket::connect(l.address(), Deadline::afterMs(5000));
  Socket server = l.accept(Deadline::afterMs(5000));
  std::vector<char> big(4 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  std::thread writer([&] { client.sendAll(big.data(), big.size(), Deadline::afterMs(10000), "server"); });
  std::vector<char> got(big.size());
  server.recvAll(got.data(), got.size(), Deadline::afterMs(10000), "client");
  writer.join();
  EXPECT_EQ(got, big);
  client.close();
  char c;
  try {
    server.recvAll(&c, 1, Deadline::afterMs(5000), "client 7");
    FAIL() << "expected PeerError";
  } catch (const PeerError& e) {
    EXPECT_STREQ(e.what(), "client 7: connection closed");
  }
}

TEST(Socket, RecvTimesOutWhenNothingArrives) {
  Listener l(SocketAddress::parse("127.0.0.1:0"));
  Socket client = Socket::connect(l.address(), Deadline::afterMs(5000));
  Socket server = l.accept(Deadline::afterMs(5000));
  char c;
  EXPECT_THROW(server.recvAll(&c, 1, Deadline::afterMs(50), "client"), TimeoutError);
  EXPECT_EQ(server.recvSome(&c, 1, "client"), 0u);
}

TEST(Socket, ConnectRetriesUntilTheListenerAppears) {
  SocketAddress at;
  {
    Listener probe(SocketAddress::parse("127.0.0.1:0"));
    at = probe.address();
  }  // closed: connects are refused now
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Listener l(at);
    Socket s = l.accept(Deadline::afterMs(5000));
    s.sendAll("k", 1, Deadline::afterMs(5000), "client");
  });
  Socket c = Socket::connect(at, Deadline::afterMs(5000));
  char got = 0;
  c.recvAll(&got, 1, Deadline::afterMs(5000), "server");
  late.join();
  EXPECT_EQ(got, 'k');
}

TEST(Socket, ConnectToNobodyTimesOut) {
  SocketAddress at;
  {
    Listener probe(SocketAddress::parse("127.0.0.1:0"));
    at = probe.address();
  }
  EXPECT_THROW(Socket::connect(at, Deadline::afterMs(100)), TimeoutError);
}

TEST(Socket, TryAcceptReturnsInvalidWhenNonePending) {
  Listener l(SocketAddress::parse("127.0.0.1:0"));
  EXPECT_FALSE(l.tryAccept().valid());
  EXPECT_THROW(l.accept(Deadline::afterMs(20)), TimeoutError);
}

}  // namespace
}  // namespace hetccl::net
