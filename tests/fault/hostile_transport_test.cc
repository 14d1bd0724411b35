// Hostile clients against a tcp transport listener while the real peer connects: a flood of 1000
// connections mixing silent ones held open, garbage, HTTP requests, hellos with a wrong token and hellos
// for another rank, plus a port scan's connect-and-close. accept() must still return the real peer's
// sockets, data must flow, and every socket the listener accepted must be closed once it is gone. The
// time the flood adds to accept() is printed (a benchmark note, not a check).
#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/error.hpp"
#include "net/socket.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "transport_harness.hpp"

namespace hetccl::transport::testing {
namespace {

int openFds() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n - 1;
}

/// Raises the descriptor limit so that the flood fits; returns how many connections it may use.
int floodSize(int wanted) {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  rlim_t want = static_cast<rlim_t>(2 * wanted + 256);  // both ends of each connection live in this process
  if (lim.rlim_cur < want) {
    lim.rlim_cur = std::min(want, lim.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &lim);
    ::getrlimit(RLIMIT_NOFILE, &lim);
  }
  return static_cast<int>(std::min<rlim_t>(wanted, (lim.rlim_cur - 256) / 2));
}

void sendBytes(const net::Socket& s, const void* data, size_t n) {
  try {
    s.sendAll(data, n, Deadline::afterMs(2000), "listener");
  } catch (const Error&) {  // the listener may already have closed it: that is its right
  }
}

/// Opens up to `count` hostile connections of five kinds to `to` until `stop`; the ones not closed at
/// once are returned (held open). A scan's connect-and-close probes come last.
std::vector<net::Socket> flood(const net::SocketAddress& to, int count, uint64_t token, std::atomic<int>& made,
                               const std::atomic<bool>& stop) {
  std::vector<net::Socket> held;
  const char http[] = "GET / HTTP/1.1\r\nHost: hetccl\r\n\r\n";
  for (int i = 0; i < count && !stop; ++i) {
    net::Socket s;
    try {
      s = net::Socket::connect(to, Deadline::afterMs(200));
    } catch (const Error&) {  // backlog full while nobody accepts: a flood loses some, as a real one would
      continue;
    }
    switch (i % 5) {
      case 0: break;  // silent: connects and says nothing
      case 1: sendBytes(s, http, sizeof http - 1); break;
      case 2: {
        unsigned char junk[64];
        for (size_t k = 0; k < sizeof junk; ++k) junk[k] = static_cast<unsigned char>(i * 31 + k * 7);
        sendBytes(s, junk, sizeof junk);
        break;
      }
      case 3: {  // the right sender and receiver with a wrong token
        auto w = tcp::Hello{0, 1, 0, 1, token ^ 0x5a5a}.encode();
        sendBytes(s, w.data(), w.size());
        break;
      }
      default: {  // a valid-looking hello for a rank this listener is not
        auto w = tcp::Hello{0, 1, 0, 7, token}.encode();
        sendBytes(s, w.data(), w.size());
        break;
      }
    }
    held.push_back(std::move(s));
    ++made;
  }
  for (int i = 0; i < 200 && !stop; ++i) {
    try {
      net::Socket::connect(to, Deadline::afterMs(200)).close();
    } catch (const Error&) {
    }
  }
  return held;
}

/// accept() runs from the start (it drains the flood as it arrives); the real peer connects once the
/// whole flood is in. Returns the seconds from the real connect to accept's return.
double acceptSeconds(bool underAttack, int count) {
  auto t = makeTransport("tcp");
  PeerInfo sender = localRank(0), receiver = localRank(1);
  const uint64_t token = freshToken();
  const int fdsBefore = openFds();
  Link link;
  link.listener = t->listen(receiver);
  std::string acceptError;
  std::thread acceptor([&] {
    try {
      link.recv = t->accept(*link.listener, ConnectInfo{receiver, sender, token, nullptr}, Deadline::afterMs(60000));
    } catch (const Error& e) {
      acceptError = e.what();
    }
  });
  std::atomic<int> made{0};
  std::atomic<bool> stop{false};
  std::vector<net::Socket> held;
  if (underAttack) held = flood(tcp::decodeAddressHandle(link.listener->handle()), count, token, made, stop);
  const auto start = std::chrono::steady_clock::now();
  link.send = t->connect(link.listener->handle(), ConnectInfo{sender, receiver, token, nullptr}, Deadline::afterMs(20000));
  acceptor.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(acceptError, "");
  if (!link.recv) return took;
  auto data = patternBuffer(3, 1 << 20);
  EXPECT_TRUE(transfer(link, data) == data);
  if (underAttack) {
    EXPECT_EQ(made.load(), count) << "the flood did not get all its connections in";
    std::printf("flood: %d hostile connections made before the real peer connected\n", made.load());
  }
  link = Link{};
  held.clear();
  // Everything the listener accepted is closed with it (the hostile sockets of this process too).
  EXPECT_LE(openFds(), fdsBefore) << "descriptors left after the listener and the flood are gone";
  return took;
}

TEST(HostileTransport, AcceptSucceedsUnderAFloodOfHostileConnections) {
  const int count = floodSize(1000);
  if (count < 1000) std::printf("note: descriptor limit allows a flood of %d connections only\n", count);
  ASSERT_GE(count, 100);
  const double quiet = acceptSeconds(false, 0);
  const double attacked = acceptSeconds(true, count);
  std::printf("benchmark note: tcp accept took %.3f s quietly and %.3f s behind %d hostile connections "
              "(+%.3f s)\n", quiet, attacked, count, attacked - quiet);
}

}  // namespace
}  // namespace hetccl::transport::testing
