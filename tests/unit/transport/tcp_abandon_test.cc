// tcp abandon(): once it returns, the socket worker threads no longer touch the buffers or the Reducer
// of outstanding requests, even while the peer keeps sending. This is what the engine relies on when a
// collective fails (e.g. another peer died): it abandons its connections, then frees its scratch space
// and reducers. Before abandon() existed, workers went on reducing into freed memory and called through
// a freed Reducer (SIGSEGV in survivors of tests/fault/kill_during_allreduce.sh); under ASan the
// heap-allocated Reducer and destination below turn any such late access into a report.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport_harness.hpp"

namespace hetccl::transport::testing {
namespace {

constexpr size_t kMessageBytes = 64u << 20;  // far more than the sockets can buffer (16 MB each)

/// Counts reducer calls, split into before and after the test declared the request abandoned.
struct ReduceLog {
  std::atomic<int> calls{0};
  std::atomic<bool> abandoned{false};
  std::atomic<int> lateCalls{0};
};

void countingSum(void* dst, const void* incoming, size_t count, const void* ctx) {
  auto* log = static_cast<ReduceLog*>(const_cast<void*>(ctx));
  if (log->abandoned.load()) ++log->lateCalls;
  else ++log->calls;
  auto* d = static_cast<int32_t*>(dst);
  const auto* in = static_cast<const int32_t*>(incoming);
  for (size_t i = 0; i < count; ++i) d[i] += in[i];
}

/// Spins until `pred` holds; fails the test after 10 s.
template <typename Pred>
bool waitUntil(Pred pred) {
  Deadline d = Deadline::afterMs(10000);
  while (!pred()) {
    if (d.expired()) {
      ADD_FAILURE() << "condition not reached within 10 s";
      return false;
    }
    std::this_thread::yield();
  }
  return true;
}

TEST(TcpAbandon, ReducingReceiveStopsTouchingFreedBuffersWhileThePeerKeepsSending) {
  auto t = makeTcpTransport();
  Link link = connectPair(*t, 0, 1);
  ReduceLog log;
  auto reducer = std::make_unique<Reducer>(Reducer{countingSum, &log, sizeof(int32_t)});
  auto dst = std::make_unique<std::vector<unsigned char>>(kMessageBytes, 0);
  std::vector<unsigned char> src(kMessageBytes, 1);

  Request r = link.recv->irecv(dst->data(), kMessageBytes, reducer.get());
  Request s = link.send->isend(src.data(), kMessageBytes);
  ASSERT_TRUE(waitUntil([&] { return log.calls.load() > 0; }));  // data is flowing

  link.recv->abandon();  // the peer is still sending: workers are mid-piece
  log.abandoned = true;
  reducer.reset();  // what the engine frees once execute() has thrown
  dst.reset();

  EXPECT_THROW(link.recv->test(r), AbortedError);
  std::vector<unsigned char> more(64);
  EXPECT_THROW(link.recv->irecv(more.data(), more.size()), AbortedError);
  link.send->abandon();  // the rest is still outstanding: nobody reads it any more
  EXPECT_THROW(link.send->test(s), AbortedError);
  link.send.reset();
  link.recv.reset();
  EXPECT_EQ(log.lateCalls.load(), 0) << "a worker reduced after abandon() returned";
}

TEST(TcpAbandon, ReceiveWaitingOnASilentPeerIsAbandoned) {
  auto t = makeTcpTransport();
  Link link = connectPair(*t, 0, 1);
  auto dst = std::make_unique<std::vector<unsigned char>>(1u << 20);
  Request r = link.recv->irecv(dst->data(), dst->size());
  EXPECT_FALSE(link.recv->test(r));
  link.recv->abandon();
  dst.reset();
  EXPECT_THROW(link.recv->test(r), AbortedError);
  link.recv->abandon();  // idempotent
}

TEST(TcpAbandon, SendBlockedOnAPeerThatDoesNotReadIsAbandoned) {
  auto t = makeTcpTransport();
  Link link = connectPair(*t, 0, 1);
  auto src = std::make_unique<std::vector<unsigned char>>(kMessageBytes, 7);
  Request s = link.send->isend(src->data(), src->size());
  EXPECT_FALSE(link.send->test(s));
  link.send->abandon();
  src.reset();
  EXPECT_THROW(link.send->test(s), AbortedError);
  EXPECT_THROW(link.send->isend(&s, sizeof s), AbortedError);
}

TEST(TcpAbandon, AnEarlierPeerFailureIsKeptOverTheAbandonment) {
  auto t = makeTcpTransport();
  Link link = connectPair(*t, 0, 1);
  std::vector<unsigned char> dst(1u << 20);
  Request r = link.recv->irecv(dst.data(), dst.size());
  link.send.reset();  // the peer dies with the receive outstanding
  try {
    waitUntil([&] { return link.recv->test(r); });
    ADD_FAILURE() << "a receive from a closed peer completed";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 0) << e.what();
  }
  link.recv->abandon();
  EXPECT_THROW(link.recv->test(r), PeerError);
}

}  // namespace
}  // namespace hetccl::transport::testing
