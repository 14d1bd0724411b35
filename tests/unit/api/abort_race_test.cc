// Abort and destroy racing other calls on the same communicator (issue 12 item 1): a watchdog polling
// hetcclCommGetAsyncError while another thread aborts, a collective in flight while another thread
// aborts, destroy while another thread is inside a call, calls on a destroyed or aborted handle, and a
// grouped operation whose communicator is aborted before the group ends. Each race runs many times; the
// TSan and ASan stages of scripts/test.sh run this file too (a use-after-free shows up there even when the
// freed memory happens to still hold the old bytes).
#include <atomic>
#include <thread>
#include <vector>

#include "unit/api/api_fixture.hpp"

namespace hetccl::test {
namespace {

constexpr int kIterations = 100;
// Each abort there waits its bounded drain time for the group's reference: few iterations.
constexpr int kGroupIterations = 3;

class AbortRace : public ApiTest {};

/// Runs fn() on its own thread in a loop until `stop`, recording every result code it returns.
struct Hammer {
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  std::atomic<int> unexpected{0};  ///< results other than the allowed ones
  std::thread thread;

  template <typename Fn>
  void start(Fn fn, std::vector<hetcclResult_t> allowed) {
    thread = std::thread([this, fn, allowed] {
      while (!stop.load()) {
        hetcclResult_t r = fn();
        calls.fetch_add(1);
        bool ok = false;
        for (auto a : allowed) ok = ok || r == a;
        if (!ok) unexpected.fetch_add(1);
      }
    });
  }
  void waitCalls(int n) {
    while (calls.load() < n) std::this_thread::yield();
  }
  void finish() {
    stop.store(true);
    thread.join();
  }
};

TEST_F(AbortRace, WatchdogPollsAsyncErrorWhileAnotherThreadAborts) {
  for (int it = 0; it < kIterations; ++it) {
    initAll(2);
    hetcclComm_t victim = comms_[0];
    Hammer watchdog;
    // Before the abort: success with asyncError Success. Racing it or after it: InvalidUsage (the
    // handle is no longer live). Anything else, or a crash, fails.
    watchdog.start(
        [victim] {
          hetcclResult_t async = hetcclSuccess;
          return hetcclCommGetAsyncError(victim, &async);
        },
        {hetcclSuccess, hetcclInvalidUsage});
    watchdog.waitCalls(10);
    ASSERT_EQ(hetcclCommAbort(victim), hetcclSuccess) << hetcclGetLastError(nullptr);
    comms_[0] = nullptr;
    watchdog.waitCalls(watchdog.calls.load() + 10);  // some calls certainly after the abort
    watchdog.finish();
    EXPECT_EQ(watchdog.unexpected.load(), 0) << "iteration " << it;
    hetcclResult_t async = hetcclSuccess;
    EXPECT_EQ(hetcclCommGetAsyncError(victim, &async), hetcclInvalidUsage);
    EXPECT_NE(std::string(hetcclGetLastError(nullptr)).find("not a live communicator"), std::string::npos);
    hetcclCommAbort(comms_[1]);
    comms_[1] = nullptr;
  }
}

TEST_F(AbortRace, CollectiveInFlightWhileAnotherThreadAborts) {
  for (int it = 0; it < kIterations; ++it) {
    initAll(2);
    hetcclComm_t victim = comms_[0];
    // Rank 1 never joins: rank 0's all-reduces block until the abort. Before the abort nothing returns;
    // the one in flight fails (aborted, or a peer-side error), later ones get InvalidUsage.
    Hammer caller;
    caller.start(
        [victim] {
          float x = 1;
          return hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, victim, nullptr);
        },
        {hetcclInvalidUsage, hetcclRemoteError});
    std::this_thread::sleep_for(std::chrono::milliseconds(it % 5));  // abort at varying points
    ASSERT_EQ(hetcclCommAbort(victim), hetcclSuccess) << hetcclGetLastError(nullptr);
    comms_[0] = nullptr;
    caller.waitCalls(2);
    caller.finish();
    EXPECT_EQ(caller.unexpected.load(), 0) << "iteration " << it;
    hetcclCommAbort(comms_[1]);
    comms_[1] = nullptr;
  }
}

TEST_F(AbortRace, DestroyWhileAnotherThreadIsInACall) {
  for (int it = 0; it < kIterations; ++it) {
    initAll(2);
    Hammer queries;  // another thread of rank 0 keeps asking the communicator while rank 0 destroys it
    hetcclComm_t c0 = comms_[0];
    queries.start(
        [c0] {
          int n = 0;
          hetcclResult_t r = hetcclCommCount(c0, &n);
          if (r == hetcclSuccess && n != 2) return hetcclInternalError;
          hetcclResult_t async = hetcclSuccess;
          hetcclResult_t r2 = hetcclCommGetAsyncError(c0, &async);
          return r != hetcclSuccess ? r : r2;
        },
        {hetcclSuccess, hetcclInvalidUsage});
    queries.waitCalls(5);
    forEachRank([&](int r) {
      int32_t v = r + 1, out = 0;
      EXPECT_EQ(hetcclAllReduce(&v, &out, 1, hetcclInt32, hetcclSum, comms_[r], nullptr), hetcclSuccess);
      EXPECT_EQ(out, 3);
      EXPECT_EQ(hetcclCommDestroy(comms_[r]), hetcclSuccess) << hetcclGetLastError(nullptr);
    });
    comms_.assign(2, nullptr);
    queries.waitCalls(queries.calls.load() + 5);
    queries.finish();
    EXPECT_EQ(queries.unexpected.load(), 0) << "iteration " << it;
  }
}

TEST_F(AbortRace, EveryCallAfterDestroyOrAbortIsRefused) {
  initAll(2);
  std::vector<hetcclComm_t> dead = comms_;
  forEachRank([&](int r) { EXPECT_EQ(hetcclCommDestroy(comms_[r]), hetcclSuccess); });
  comms_.assign(2, nullptr);
  initAll(2);  // new communicators must not revive the old handles
  hetcclComm_t aborted = comms_[0];
  ASSERT_EQ(hetcclCommAbort(aborted), hetcclSuccess);
  comms_[0] = nullptr;
  dead.push_back(aborted);
  for (hetcclComm_t c : dead) {
    float x = 1;
    int n = 0;
    hetcclResult_t async = hetcclSuccess;
    hetcclComm_t child = nullptr;
    EXPECT_EQ(hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, c, nullptr), hetcclInvalidUsage);
    EXPECT_NE(std::string(hetcclGetLastError(nullptr)).find("not a live communicator"), std::string::npos);
    EXPECT_EQ(hetcclCommCount(c, &n), hetcclInvalidUsage);
    EXPECT_EQ(hetcclCommGetAsyncError(c, &async), hetcclInvalidUsage);
    EXPECT_EQ(hetcclCommSplit(c, 0, 0, &child, nullptr), hetcclInvalidUsage);
    EXPECT_EQ(hetcclCommFinalize(c), hetcclInvalidUsage);
    EXPECT_EQ(hetcclCommDestroy(c), hetcclInvalidUsage);
    EXPECT_EQ(hetcclCommAbort(c), hetcclInvalidUsage);
  }
  int n = 0;
  EXPECT_EQ(hetcclCommCount(comms_[1], &n), hetcclSuccess);  // the live one still works
}

TEST_F(AbortRace, GroupedOperationOfACommunicatorAbortedBeforeGroupEnd) {
  for (int it = 0; it < kGroupIterations; ++it) {
    initAll(2);
    hetcclComm_t victim = comms_[0];
    std::atomic<bool> queued{false}, aborted{false};
    hetcclResult_t endResult = hetcclSuccess;
    std::thread grouper([&] {
      float x = 1;
      hetcclGroupStart();
      EXPECT_EQ(hetcclAllReduce(&x, &x, 1, hetcclFloat32, hetcclSum, victim, nullptr), hetcclSuccess);
      queued = true;
      while (!aborted.load()) std::this_thread::yield();
      endResult = hetcclGroupEnd();  // runs an operation of a communicator another thread aborted
    });
    while (!queued.load()) std::this_thread::yield();
    ASSERT_EQ(hetcclCommAbort(victim), hetcclSuccess);
    comms_[0] = nullptr;
    aborted = true;
    grouper.join();
    EXPECT_EQ(endResult, hetcclRemoteError) << hetcclGetLastError(nullptr);
    hetcclCommAbort(comms_[1]);
    comms_[1] = nullptr;
  }
}

}  // namespace
}  // namespace hetccl::test
