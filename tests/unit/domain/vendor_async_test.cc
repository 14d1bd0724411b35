// The vendor library's asynchronous errors as hetcclCommGetAsyncError reports them (issue 11 item 3):
// vendorAsyncError() turns what the fake NCCL's ncclCommGetAsyncError reports into an error naming the
// hetccl domain, and stays safe when a watchdog thread polls while another thread aborts.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "bootstrap_harness.hpp"
#include "exec/vendor/vendor_route.hpp"
#include "core/error.hpp"
#include "domain/nccl/nccl_comm.hpp"
#include "domain/nccl/nccl_vendor.hpp"
#include "fake_control.hpp"

namespace hetccl::domain::nccl {
namespace {

using bootstrap::createUniqueId;
using bootstrap::testing::joinAll;
using bootstrap::testing::ScopedEnv;

class VendorAsync : public ::testing::Test {
 protected:
  ScopedEnv timeout_{"HETCCL_TIMEOUT", "20"};
  testing::FakeControl fake_{FAKE_NCCL_FULL};
  std::unique_ptr<NcclVendor> vendor_ = openNccl(FAKE_NCCL_FULL);

  std::unique_ptr<NcclComm> soloComm() {
    solo_ = joinAll(createUniqueId(), 1);
    EXPECT_TRUE(solo_[0].bootstrap) << solo_[0].error;
    auto comm = vendor_->createComm(*solo_[0].bootstrap, {0});
    return std::unique_ptr<NcclComm>(static_cast<NcclComm*>(comm.release()));
  }
  std::vector<bootstrap::testing::JoinResult> solo_;
};

TEST_F(VendorAsync, InjectedAsyncErrorIsReportedNamingTheDomain) {
  auto comm = soloComm();
  EXPECT_FALSE(vendorAsyncError(*comm, "cuda"));
  fake_.setAsyncError(comm->native(), abi::ncclInProgress);  // still initialising: not an error
  EXPECT_FALSE(vendorAsyncError(*comm, "cuda"));
  fake_.setAsyncError(comm->native(), abi::ncclUnhandledCudaError);
  std::optional<Error> e = vendorAsyncError(*comm, "cuda");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), Result::UnhandledCudaError);
  const std::string what = e->what();
  EXPECT_NE(what.find("domain 'cuda': its vendor communicator reported an asynchronous error"), std::string::npos)
      << what;
  EXPECT_NE(what.find("NCCL"), std::string::npos) << what;  // the vendor's own part names the library
}

TEST_F(VendorAsync, WatchdogPollingWhileAnotherThreadAborts) {
  for (int it = 0; it < 50; ++it) {
    auto comm = soloComm();
    std::atomic<bool> stop{false};
    std::atomic<int> polls{0};
    std::thread watchdog([&] {
      while (!stop.load()) {
        std::optional<Error> e = vendorAsyncError(*comm, "cuda");
        // Before the abort: nothing; after it: the domain communicator says it was aborted (InvalidUsage).
        if (e && e->code() != Result::InvalidUsage) ADD_FAILURE() << e->what();
        polls.fetch_add(1);
      }
    });
    while (polls.load() < 5) std::this_thread::yield();
    comm->abort();
    const int after = polls.load();
    while (polls.load() < after + 5) std::this_thread::yield();
    stop = true;
    watchdog.join();
  }
}

}  // namespace
}  // namespace hetccl::domain::nccl
