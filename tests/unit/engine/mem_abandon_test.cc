// mem transport abandon(): once it returns, the transport no longer touches the abandoning side's buffers
// or Reducer (the engine frees them right after), and the peer's matching requests never complete, so
// the peer learns of the failure from the kill flag, its failure detector or its deadline instead of
// reading freed memory. Under ASan (HETCCL_SANITIZE=address) the heap buffers freed right after abandon()
// also catch a late access directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "core/error.hpp"
#include "unit/engine/harness.hpp"

namespace hetccl::test {
namespace {

TEST(MemAbandon, WithdrawnRendezvousSendIsNeverRead) {
  MemWorld world(2, /*eagerBytes=*/0);
  auto a = world.linksFor(0), b = world.linksFor(1);
  auto src = std::make_unique<int[]>(1000);
  for (int i = 0; i < 1000; ++i) src[i] = i;
  auto s = a->sendTo(1).isend(src.get(), 1000 * sizeof(int));
  a->sendTo(1).abandon();
  src.reset();  // what the engine does right after abandon()
  std::vector<int> dst(1000, -1);
  auto r = b->recvFrom(0).irecv(dst.data(), dst.size() * sizeof(int));
  EXPECT_FALSE(b->recvFrom(0).test(r)) << "received a withdrawn message";
  EXPECT_EQ(dst[1], -1);
  EXPECT_THROW(a->sendTo(1).test(s), InternalError) << "a connection is unusable after abandon()";
  world.fabric().kill(0);
  EXPECT_THROW(b->recvFrom(0).test(r), PeerError);
}

TEST(MemAbandon, EagerSendsBeforeTheFirstWithdrawnOneStillArrive) {
  MemWorld world(2, /*eagerBytes=*/sizeof(int));
  auto a = world.linksFor(0), b = world.linksFor(1);
  int eager = 7;
  int64_t large = 8, afterLarge = 9;
  a->sendTo(1).isend(&eager, sizeof eager);
  a->sendTo(1).isend(&large, sizeof large);  // rendezvous
  a->sendTo(1).isend(&eager, sizeof eager);  // eager, but behind a withdrawn one: withdrawn too
  a->sendTo(1).abandon();
  int gotEager = 0;
  auto r1 = b->recvFrom(0).irecv(&gotEager, sizeof gotEager);
  auto r2 = b->recvFrom(0).irecv(&afterLarge, sizeof afterLarge);
  EXPECT_TRUE(b->recvFrom(0).test(r1));
  EXPECT_EQ(gotEager, 7);
  EXPECT_FALSE(b->recvFrom(0).test(r2));
  EXPECT_EQ(afterLarge, 9);
}

TEST(MemAbandon, AbandonedReceiveIsNeverWrittenAndItsSendNeverCompletes) {
  MemWorld world(2, /*eagerBytes=*/0);
  auto a = world.linksFor(0), b = world.linksFor(1);
  int calls = 0;
  transport::Reducer counting{[](void*, const void*, size_t, const void* ctx) { ++*static_cast<int*>(const_cast<void*>(ctx)); },
                              &calls, sizeof(int)};
  auto dst = std::make_unique<int[]>(100);
  b->recvFrom(0).irecv(dst.get(), 100 * sizeof(int), &counting);
  b->recvFrom(0).abandon();
  dst.reset();
  std::vector<int> src(100, 1);
  auto s = a->sendTo(1).isend(src.data(), src.size() * sizeof(int));
  EXPECT_FALSE(a->sendTo(1).test(s)) << "a send completed into an abandoned receive";
  EXPECT_EQ(calls, 0);
  EXPECT_THROW(b->recvFrom(0).irecv(src.data(), 4), InternalError);
}

// The race the engine hits: the receiver copies on its own thread while the sender abandons and frees.
// Whatever the interleaving, the receiver copies the whole message or none of it.
TEST(MemAbandon, ConcurrentAbandonNeverLeavesAHalfCopy) {
  constexpr size_t kInts = 1 << 18;  // 1 MiB: a copy long enough to overlap abandon()
  for (int round = 0; round < 20; ++round) {
    MemWorld world(2, /*eagerBytes=*/0);
    auto a = world.linksFor(0), b = world.linksFor(1);
    auto src = std::make_unique<int[]>(kInts);
    for (size_t i = 0; i < kInts; ++i) src[i] = 1;
    std::vector<int> dst(kInts, 0);
    auto r = b->recvFrom(0).irecv(dst.data(), kInts * sizeof(int));
    std::atomic<bool> stop{false};
    bool received = false;
    std::thread receiver([&] {
      while (!stop.load() && !received) received = b->recvFrom(0).test(r);
    });
    a->sendTo(1).isend(src.get(), kInts * sizeof(int));
    a->sendTo(1).abandon();
    src.reset();
    stop = true;
    receiver.join();
    const size_t copied = static_cast<size_t>(std::count(dst.begin(), dst.end(), 1));
    EXPECT_EQ(copied, received ? kInts : 0) << "round " << round;
  }
}

}  // namespace
}  // namespace hetccl::test
