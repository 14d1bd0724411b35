// The in-memory transport: FIFO order, eager vs rendezvous completion, Reducer, size checks, dead peers,
// abort.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "core/error.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

TEST(MemTransport, DeliversInFifoOrder) {
  MemWorld world(2);
  auto a = world.linksFor(0), b = world.linksFor(1);
  int x = 11, y = 22, gotX = 0, gotY = 0;
  auto s1 = a->sendTo(1).isend(&x, sizeof x);
  auto s2 = a->sendTo(1).isend(&y, sizeof y);
  auto r1 = b->recvFrom(0).irecv(&gotX, sizeof gotX);
  auto r2 = b->recvFrom(0).irecv(&gotY, sizeof gotY);
  EXPECT_TRUE(b->recvFrom(0).test(r2));
  EXPECT_TRUE(b->recvFrom(0).test(r1));
  EXPECT_TRUE(a->sendTo(1).test(s1));
  EXPECT_TRUE(a->sendTo(1).test(s2));
  EXPECT_EQ(gotX, 11);
  EXPECT_EQ(gotY, 22);
}

TEST(MemTransport, RendezvousSendCompletesOnlyOnceReceived) {
  MemWorld world(2, /*eagerBytes=*/0);
  auto a = world.linksFor(0), b = world.linksFor(1);
  int x = 5, got = 0;
  auto s = a->sendTo(1).isend(&x, sizeof x);
  EXPECT_FALSE(a->sendTo(1).test(s));
  x = 6;  // still the sender's buffer: the receiver copies from it
  auto r = b->recvFrom(0).irecv(&got, sizeof got);
  EXPECT_TRUE(b->recvFrom(0).test(r));
  EXPECT_TRUE(a->sendTo(1).test(s));
  EXPECT_EQ(got, 6);
}

TEST(MemTransport, EagerSendCompletesAtOnce) {
  MemWorld world(2, /*eagerBytes=*/64);
  auto a = world.linksFor(0), b = world.linksFor(1);
  int x = 5, got = 0;
  auto s = a->sendTo(1).isend(&x, sizeof x);
  EXPECT_TRUE(a->sendTo(1).test(s));
  x = 6;  // copied at isend
  auto r = b->recvFrom(0).irecv(&got, sizeof got);
  EXPECT_TRUE(b->recvFrom(0).test(r));
  EXPECT_EQ(got, 5);
}

TEST(MemTransport, ReducerAccumulatesIntoDestination) {
  MemWorld world(2);
  auto a = world.linksFor(0), b = world.linksFor(1);
  std::vector<int> src(10000), dst(10000, 1);
  std::iota(src.begin(), src.end(), 0);
  transport::Reducer add{[](void* d, const void* s, size_t n, const void*) {
                           for (size_t i = 0; i < n; ++i) static_cast<int*>(d)[i] += static_cast<const int*>(s)[i];
                         },
                         nullptr, sizeof(int)};
  a->sendTo(1).isend(src.data(), src.size() * sizeof(int));
  auto r = b->recvFrom(0).irecv(dst.data(), dst.size() * sizeof(int), &add);
  EXPECT_TRUE(b->recvFrom(0).test(r));
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(dst[i], i + 1) << i;
}

TEST(MemTransport, SizeMismatchIsPeerErrorNamingSender) {
  MemWorld world(2, 64);
  auto a = world.linksFor(0), b = world.linksFor(1);
  int x = 1;
  int64_t got = 0;
  a->sendTo(1).isend(&x, sizeof x);
  auto r = b->recvFrom(0).irecv(&got, sizeof got);
  try {
    b->recvFrom(0).test(r);
    FAIL() << "no error";
  } catch (const PeerError& e) {
    EXPECT_EQ(e.peer(), 0);
  }
}

TEST(MemTransport, KilledPeerFailsPendingRequests) {
  MemWorld world(3);
  auto a = world.linksFor(0);
  int x = 1, got = 0;
  auto s = a->sendTo(2).isend(&x, sizeof x);
  auto r = a->recvFrom(1).irecv(&got, sizeof got);
  EXPECT_FALSE(a->sendTo(2).test(s));
  world.fabric().kill(2);
  EXPECT_THROW(a->sendTo(2).test(s), PeerError);
  EXPECT_FALSE(a->recvFrom(1).test(r));  // rank 1 is alive
}

TEST(MemTransport, AbortFlagStopsWaits) {
  MemWorld world(2);
  std::atomic<bool> abortFlag{false};
  auto a = world.linksFor(0, &abortFlag);
  int got = 0;
  auto r = a->recvFrom(1).irecv(&got, sizeof got);
  EXPECT_FALSE(a->recvFrom(1).test(r));
  abortFlag = true;
  EXPECT_THROW(a->recvFrom(1).test(r), AbortedError);
}

}  // namespace
}  // namespace hetccl::test
