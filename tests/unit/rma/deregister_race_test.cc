// hetcclMemDeregister on one thread while another thread puts and gets on the same registration (issue
// 27, item 2): once deregister returned success, no transfer of that registration starts and none still
// runs -- the local buffer is never written afterwards, and every later put/get is refused
// (hetcclInvalidArgument). Deregister meanwhile either succeeds or refuses (hetcclInvalidUsage: requests
// hold it) and changes nothing. Under ASan/TSan a late write is also reported as a race on the buffer.
// Cost: about 1-3 s per transport (50 rounds of a few batched transfers each; under TSan 12 rounds,
// 10-20 s: 50 took 55-78 s there, and TSan reports a late access from one round that has it). Without the
// fix it fails on shm in most rounds; on tcp the worker is usually too slow to be caught in the window.
#include <atomic>
#include <cstring>
#include <random>

#include "rma_fixture.hpp"
#include "support/sanitizers.hpp"

namespace hetccl::test {
namespace {

using RmaDeregisterRace = RmaTest;

TEST_P(RmaDeregisterRace, NoTransferRunsOrStartsAfterDeregisterReturned) {
  start(2);
  constexpr size_t kBytes = 800000;
  constexpr int kRounds = kUnderThreadSanitizer ? 12 : 50;
  std::vector<unsigned char> remote(kBytes, 0xab);
  hetcclMemDesc_t desc;
  hetcclMem_t mr = reg(1, remote.data(), remote.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  // Batches of 100,000 small ranges: checking and planning them (about a millisecond) is the time between
  // a call's handle lookup and its start, the window in which a concurrent deregister used to slip in.
  std::vector<hetcclRmaRange_t> ranges;
  for (size_t at = 0; at + 4 <= kBytes; at += 8) ranges.push_back({at, at, 4});
  std::mt19937 rng(27);
  int startedAfter = 0, writtenAfter = 0, refused = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<unsigned char> local(kBytes, 0x11);
    hetcclMem_t ml = reg(0, local.data(), local.size());
    std::atomic<bool> deregistered{false};
    std::atomic<int> calls{0};
    hetcclResult_t refusal = hetcclSuccess;
    std::thread worker([&] {
      for (int i = 0;; ++i) {
        const bool after = deregistered.load();  // deregister had returned before this call began
        hetcclRequest_t req = nullptr;
        calls.fetch_add(1);  // the previous request is finished: nothing holds the registration now
        // Gets (writes into the registration: a late one shows); every third a put (reads it: ASan).
        const hetcclResult_t rc = i % 3 == 2 ? hetcclPutBatch(ml, r, ranges.data(), ranges.size(), &req)
                                             : hetcclGetBatch(ml, r, ranges.data(), ranges.size(), &req);
        if (rc != hetcclSuccess) {
          refusal = rc;
          return;
        }
        if (after) ++startedAfter;
        hetcclRequestWait(req);  // may fail (e.g. nothing); only whether it started after matters
        hetcclRequestFree(req);
      }
    });
    // Deregister just as the worker begins a call (the race window), after a few calls.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    const int seen = calls.load();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (calls.load() == seen && std::chrono::steady_clock::now() < until) {
    }
    // ... and has looked the handle up: it is checking its ranges now (the lookup takes microseconds).
    const auto inside = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (std::chrono::steady_clock::now() < inside) {
    }
    for (;;) {
      const hetcclResult_t rc = hetcclMemDeregister(ml);
      if (rc == hetcclSuccess) break;
      ASSERT_EQ(rc, hetcclInvalidUsage) << lastError();  // requests hold it: refused, nothing changed
      std::this_thread::yield();
    }
    deregistered.store(true);
    std::memset(local.data(), 0, kBytes);  // the caller may reuse (free) the buffer now
    worker.join();
    EXPECT_EQ(refusal, hetcclInvalidArgument) << "round " << round << ": " << lastError();
    refused += refusal == hetcclInvalidArgument;
    for (unsigned char c : local)
      if (c != 0) {
        ++writtenAfter;
        break;
      }
  }
  EXPECT_EQ(startedAfter, 0) << "transfers accepted after hetcclMemDeregister returned";
  EXPECT_EQ(writtenAfter, 0) << "rounds whose buffer was written after hetcclMemDeregister returned";
  EXPECT_EQ(refused, kRounds);
  RMA_OK(hetcclRemoteMemRelease(r));
  RMA_OK(hetcclMemDeregister(mr));
}

INSTANTIATE_TEST_SUITE_P(Transports, RmaDeregisterRace, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace hetccl::test
