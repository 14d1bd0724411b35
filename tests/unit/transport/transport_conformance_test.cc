// The transport contract (transport/base/transport.hpp), checked for every transport: exact bytes for
// awkward sizes, FIFO order, both directions at once, reducing receives, many requests in flight, a
// peer process that dies, and abort.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>

#include "core/error.hpp"
#include "transport/ucx/ucx_transport.hpp"
#include "transport_harness.hpp"

namespace hetccl::transport::testing {
namespace {

class TransportConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam().rfind("ucx", 0) == 0 && !ucxUnavailableReason().empty())
      GTEST_SKIP() << "ucx transport unavailable: " << ucxUnavailableReason();
    transport_ = makeTransport(GetParam());
  }
  std::unique_ptr<Transport> transport_;
};

TEST_P(TransportConformance, SingleMessagesOfAwkwardSizesArriveExactly) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64 * 1024 + 1}, size_t{16} << 20}) {
    Link link = connectPair(*transport_, 0, 1);
    auto data = patternBuffer(bytes, bytes);
    auto got = transfer(link, data);
    EXPECT_TRUE(got == data) << GetParam() << ": message of " << bytes << " bytes differs";
  }
}

TEST_P(TransportConformance, ThousandSmallMessagesArriveInOrder) {
  Link link = connectPair(*transport_, 0, 1);
  constexpr int kCount = 1000;
  std::vector<std::vector<unsigned char>> sent, got;
  for (int i = 0; i < kCount; ++i) {
    sent.push_back(patternBuffer(i, 1 + i % 97));
    got.emplace_back(sent.back().size(), 0);
  }
  std::thread receiver([&] {
    std::vector<Request> rs;
    for (auto& g : got) rs.push_back(link.recv->irecv(g.data(), g.size()));
    for (Request r : rs) waitDone(*link.recv, r);
  });
  std::vector<Request> ss;
  for (auto& s : sent) ss.push_back(link.send->isend(s.data(), s.size()));
  for (Request r : ss) waitDone(*link.send, r);
  receiver.join();
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(got[i], sent[i]) << "message " << i;
}

TEST_P(TransportConformance, BothDirectionsAtOnce) {
  Link ab = connectPair(*transport_, 0, 1);
  Link ba = connectPair(*transport_, 1, 0);
  const size_t bytes = 5 << 20;
  auto fromA = patternBuffer(1, bytes), fromB = patternBuffer(2, bytes);
  std::vector<unsigned char> atB(bytes), atA(bytes);
  auto rank = [](SendConn& s, const std::vector<unsigned char>& out, RecvConn& r, std::vector<unsigned char>& in) {
    Request rs = s.isend(out.data(), out.size());
    Request rr = r.irecv(in.data(), in.size());
    bool sendDone = false, recvDone = false;
    Deadline d = Deadline::afterMs(20000);
    while (!(sendDone && recvDone) && !d.expired()) {
      sendDone = sendDone || s.test(rs);
      recvDone = recvDone || r.test(rr);
      std::this_thread::yield();
    }
    EXPECT_TRUE(sendDone && recvDone);
  };
  std::thread b([&] { rank(*ba.send, fromB, *ab.recv, atB); });
  rank(*ab.send, fromA, *ba.recv, atA);
  b.join();
  EXPECT_TRUE(atB == fromA);
  EXPECT_TRUE(atA == fromB);
}

void addInt32(void* dst, const void* incoming, size_t count, const void*) {
  auto* d = static_cast<int32_t*>(dst);
  auto* s = static_cast<const int32_t*>(incoming);
  for (size_t i = 0; i < count; ++i) d[i] += s[i];
}

TEST_P(TransportConformance, ReducingReceiveSumsInt32) {
  Link link = connectPair(*transport_, 0, 1);
  const size_t count = (3 << 20) / 4 + 5;  // crosses many slots / pieces, odd tail
  std::vector<int32_t> incoming(count), acc(count);
  for (size_t i = 0; i < count; ++i) {
    incoming[i] = static_cast<int32_t>(i * 3 - 7);
    acc[i] = static_cast<int32_t>(1000 - i);
  }
  std::atomic<int> calls{0};  // tcp reduces on several socket threads at once
  auto fn = [](void* dst, const void* in, size_t n, const void* ctx) {
    static_cast<std::atomic<int>*>(const_cast<void*>(ctx))->fetch_add(1);
    addInt32(dst, in, n, nullptr);
  };
  Reducer reducer{fn, &calls, sizeof(int32_t)};
  std::thread receiver([&] {
    Request r = link.recv->irecv(acc.data(), count * 4, &reducer);
    waitDone(*link.recv, r);
  });
  Request s = link.send->isend(incoming.data(), count * 4);
  waitDone(*link.send, s);
  receiver.join();
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(acc[i], static_cast<int32_t>(1000 - i) + static_cast<int32_t>(i * 3 - 7)) << "element " << i;
  EXPECT_GT(calls, 0);
}

TEST_P(TransportConformance, ManyRequestsInFlightCompleteInAnyTestOrder) {
  Link link = connectPair(*transport_, 0, 1);
  constexpr int kCount = 48;
  std::vector<std::vector<unsigned char>> sent, got;
  for (int i = 0; i < kCount; ++i) {
    sent.push_back(patternBuffer(100 + i, (i % 3) * 100000 + 4096 + i));
    got.emplace_back(sent.back().size(), 0);
  }
  std::thread receiver([&] {
    std::vector<Request> rs;
    for (auto& g : got) rs.push_back(link.recv->irecv(g.data(), g.size()));
    for (auto it = rs.rbegin(); it != rs.rend(); ++it) waitDone(*link.recv, *it);  // newest first
  });
  std::vector<Request> ss;
  for (auto& s : sent) ss.push_back(link.send->isend(s.data(), s.size()));
  for (auto it = ss.rbegin(); it != ss.rend(); ++it) waitDone(*link.send, *it);
  receiver.join();
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(got[i], sent[i]) << "message " << i;
}

TEST_P(TransportConformance, KilledPeerProcessBecomesPeerErrorNamingIt) {
  // The child is forked before this process uses the transport (UCX's threads do not survive fork()).
  PeerInfo self = localRank(0);
  uint64_t token = freshToken();
  int toChild[2], ready[2];
  ASSERT_EQ(pipe(toChild), 0);
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the peer: connect, say so, then wait to be killed
    close(toChild[1]);
    Handle handle;
    if (read(toChild[0], handle.bytes.data(), sizeof(Handle::bytes)) != sizeof(Handle::bytes)) _exit(2);
    PeerInfo me = localRank(7);
    me.hostId = "childhost";
    auto conn = transport_->connect(handle, ConnectInfo{me, self, token, nullptr}, Deadline::afterMs(10000));
    char one = 1;
    if (write(ready[1], &one, 1) != 1) _exit(2);
    while (true) pause();
  }
  close(toChild[0]);
  close(ready[1]);
  auto listener = transport_->listen(self);
  ASSERT_EQ(write(toChild[1], listener->handle().bytes.data(), sizeof(Handle::bytes)), static_cast<ssize_t>(sizeof(Handle::bytes)));
  close(toChild[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  PeerInfo peer = localRank(7);
  peer.hostId = "childhost";
  peer.pid = child;
  auto recv = transport_->accept(*listener, ConnectInfo{self, peer, token, nullptr}, Deadline::afterMs(10000));
  ASSERT_EQ(kill(child, SIGKILL), 0);  // not reaped yet: a zombie must count as dead
  std::vector<unsigned char> buf(4096);
  Request r = recv->irecv(buf.data(), buf.size());
  Deadline d = Deadline::afterMs(10000);
  bool threw = false;
  try {
    while (!d.expired()) ASSERT_FALSE(recv->test(r)) << "no data was ever sent";
  } catch (const PeerError& e) {
    threw = true;
    EXPECT_EQ(e.peer(), 7);
    EXPECT_EQ(e.host(), "childhost");
    EXPECT_NE(std::string(e.what()).find("rank 7"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(threw) << "the dead peer was not noticed within 10 s";
  EXPECT_THROW(recv->test(r), PeerError) << "the connection must stay failed";
  int status = 0;
  waitpid(child, &status, 0);
}

TEST_P(TransportConformance, KilledReceiverProcessFailsABlockedSend) {
  int toParent[2];
  ASSERT_EQ(pipe(toParent), 0);
  PeerInfo self = localRank(0);
  uint64_t token = freshToken();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the receiver: publish the handle, accept, say so, then wait to be killed
    PeerInfo me = localRank(4);
    auto listener = transport_->listen(me);
    if (write(toParent[1], listener->handle().bytes.data(), sizeof(Handle::bytes)) != sizeof(Handle::bytes)) _exit(2);
    auto conn = transport_->accept(*listener, ConnectInfo{me, self, token, nullptr}, Deadline::afterMs(10000));
    char one = 1;
    if (write(toParent[1], &one, 1) != 1) _exit(2);
    while (true) pause();
  }
  close(toParent[1]);
  Handle handle;
  ASSERT_EQ(read(toParent[0], handle.bytes.data(), sizeof(Handle::bytes)), static_cast<ssize_t>(sizeof(Handle::bytes)));
  PeerInfo peer = localRank(4);
  peer.pid = child;
  auto send = transport_->connect(handle, ConnectInfo{self, peer, token, nullptr}, Deadline::afterMs(10000));
  char byte = 0;
  ASSERT_EQ(read(toParent[0], &byte, 1), 1);
  close(toParent[0]);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  std::vector<unsigned char> big(64 << 20, 1);  // more than any ring or socket buffer holds
  Request r = send->isend(big.data(), big.size());
  Deadline d = Deadline::afterMs(10000);
  try {
    while (!d.expired()) ASSERT_FALSE(send->test(r)) << "nobody received the data";
    ADD_FAILURE() << "the dead receiver was not noticed within 10 s";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 4);
    EXPECT_NE(std::string(e.what()).find("rank 4"), std::string::npos) << e.what();
  }
  send.reset();
  int status = 0;
  waitpid(child, &status, 0);
}

TEST_P(TransportConformance, AbortFlagStopsAWaitingReceive) {
  std::atomic<bool> abort{false};
  Link link = connectPair(*transport_, 0, 1, &abort);
  std::vector<unsigned char> buf(1000);
  Request r = link.recv->irecv(buf.data(), buf.size());
  EXPECT_FALSE(link.recv->test(r));
  abort = true;
  Deadline d = Deadline::afterMs(10000);
  EXPECT_THROW(
      {
        while (!d.expired()) link.recv->test(r);
      },
      AbortedError);
}

// ucx_tcp / ucx_all: the ucx transport over UCX's tcp / every UCX transport found (shared memory, cma and
// tcp here; UCX_TLS set per test process; skipped where libucp does not load).
INSTANTIATE_TEST_SUITE_P(AllTransports, TransportConformance, ::testing::Values("shm", "tcp", "ucx_tcp", "ucx_all"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hetccl::transport::testing
