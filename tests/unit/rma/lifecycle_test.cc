// The communicator's end reaches RMA: finalize/destroy stop the progress thread without a hang, requests
// still pending fail, peers learn that the rank left; abort wakes a blocked NotifyWait at once; handles
// can still be released afterwards; the path is described per peer.
#include <chrono>
#include <cstring>

#include "rma_fixture.hpp"

namespace hetccl::test {
namespace {

using RmaLifecycle = RmaTest;
using Clock = std::chrono::steady_clock;

TEST_P(RmaLifecycle, DestroyWithTransfersInFlight) {
  start(2);
  std::vector<unsigned char> a(8 << 20, 1), b(8 << 20, 0);
  hetcclMemDesc_t desc;
  hetcclMem_t ma = reg(0, a.data(), a.size());
  hetcclMem_t mb = reg(1, b.data(), b.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  std::vector<hetcclRequest_t> reqs(16);
  for (auto& q : reqs) RMA_OK(hetcclPut(ma, 0, r, 0, a.size(), &q));
  const auto t0 = Clock::now();
  onRanks(2, [&](int rank) { EXPECT_EQ(hetcclCommDestroy(comms_[rank]), hetcclSuccess) << lastError(); });
  comms_.clear();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
  for (auto q : reqs) {
    hetcclResult_t rc = hetcclRequestWait(q);  // done before the end, or failed by it: never hangs
    if (rc != hetcclSuccess) {
      EXPECT_EQ(rc, hetcclRemoteError) << lastError();
    }
    EXPECT_EQ(hetcclRequestFree(q), hetcclSuccess);
  }
  hetcclRequest_t q = nullptr;
  EXPECT_NE(hetcclPut(ma, 0, r, 0, 8, &q), hetcclSuccess);  // the service is stopped
  EXPECT_EQ(hetcclRemoteMemRelease(r), hetcclSuccess);
  EXPECT_EQ(hetcclMemDeregister(ma), hetcclSuccess);
  EXPECT_EQ(hetcclMemDeregister(mb), hetcclSuccess);
}

TEST_P(RmaLifecycle, PeerThatLeftIsNamed) {
  start(2);
  std::vector<unsigned char> a(64, 1), b(64, 0);
  hetcclMemDesc_t desc;
  hetcclMem_t ma = reg(0, a.data(), a.size());
  hetcclMem_t mb = reg(1, b.data(), b.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  // Rank 1 finalizes (its RMA stops first, then it waits for rank 0 in the finalize barrier) while rank 0
  // waits for a notification from it: the wait ends at once, naming rank 1; so does a put to it.
  std::thread leaver([&] { EXPECT_EQ(hetcclCommFinalize(comms_[1]), hetcclSuccess) << lastError(); });
  const auto t0 = Clock::now();
  EXPECT_EQ(hetcclNotifyWait(comms_[0], 1, 9, -1), hetcclRemoteError);
  EXPECT_NE(lastError().find("rank 1 (host"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("finalized"), std::string::npos) << lastError();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  hetcclRequest_t q = nullptr;
  EXPECT_EQ(hetcclPut(ma, 0, r, 0, 8, &q), hetcclRemoteError);
  EXPECT_NE(lastError().find("rank 1 (host"), std::string::npos) << lastError();
  EXPECT_EQ(hetcclCommFinalize(comms_[0]), hetcclSuccess) << lastError();
  leaver.join();
  EXPECT_EQ(hetcclRemoteMemRelease(r), hetcclSuccess);
  EXPECT_EQ(hetcclMemDeregister(ma), hetcclSuccess);
  EXPECT_EQ(hetcclMemDeregister(mb), hetcclSuccess);
  for (auto c : comms_) EXPECT_EQ(hetcclCommDestroy(c), hetcclSuccess);
  comms_.clear();
}

TEST_P(RmaLifecycle, AbortWakesWaiters) {
  start(2);
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_EQ(hetcclNotifyWait(comms_[0], 1, 5, -1), hetcclRemoteError);
    EXPECT_NE(lastError().find("abort"), std::string::npos) << lastError();
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = Clock::now();
  EXPECT_EQ(hetcclCommAbort(comms_[0]), hetcclSuccess);
  comms_[0] = nullptr;
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
}

TEST_P(RmaLifecycle, StaleAfterTheOwnerDeregisteredWhileOthersWrite) {
  // Rank 1 deregisters while rank 0 keeps writing: every put either lands before (Success) or is refused
  // as stale; the memory is never written after the deregistration returned.
  start(2);
  std::vector<unsigned char> a(1 << 20, 5), b(1 << 20, 0);
  hetcclMemDesc_t desc;
  hetcclMem_t ma = reg(0, a.data(), a.size());
  hetcclMem_t mb = reg(1, b.data(), b.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  std::atomic<bool> deregistered{false};
  int stale = 0;
  std::thread writer([&] {
    for (int i = 0; i < 400; ++i) {
      hetcclRequest_t q;
      ASSERT_EQ(hetcclPut(ma, 0, r, 0, a.size(), &q), hetcclSuccess);
      hetcclResult_t rc = hetcclRequestWait(q);
      if (rc != hetcclSuccess) {
        EXPECT_EQ(rc, hetcclInvalidArgument);
        EXPECT_NE(lastError().find("stale"), std::string::npos) << lastError();
        ++stale;
      }
      hetcclRequestFree(q);
      if (deregistered && stale > 3) break;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  RMA_OK(hetcclMemDeregister(mb));
  std::memset(b.data(), 0, b.size());
  deregistered = true;
  writer.join();
  EXPECT_GT(stale, 0);
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](unsigned char c) { return c == 0; }));
  RMA_OK(hetcclRemoteMemRelease(r));
  RMA_OK(hetcclMemDeregister(ma));
}

INSTANTIATE_TEST_SUITE_P(Transports, RmaLifecycle, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace hetccl::test
