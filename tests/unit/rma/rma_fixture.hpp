// Threads-as-ranks fixture for the RMA C API (hetccl_rma.h): N communicators of one job in this process
// over a chosen transport, RMA initialised on each, and helpers to register memory and hand descriptors
// to the other ranks (in-process, as an application would through its own channel).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_rma.h"

namespace hetccl::test {

#define RMA_OK(call) ASSERT_EQ((call), hetcclSuccess) << #call << ": " << hetcclGetLastError(nullptr)
#define RMA_EXPECT_OK(call) EXPECT_EQ((call), hetcclSuccess) << #call << ": " << hetcclGetLastError(nullptr)

/// Runs fn(rank) on one thread per rank and joins them.
inline void onRanks(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

/// Creates the communicators of one job (`transport`: "shm", "tcp" or "" for automatic); empty on failure.
inline std::vector<hetcclComm_t> makeJob(int n, const char* transport) {
  hetcclUniqueId id;
  if (hetcclGetUniqueId(&id) != hetcclSuccess) return {};
  std::vector<hetcclComm_t> comms(n, nullptr);
  std::vector<hetcclResult_t> rc(n, hetcclSuccess);
  onRanks(n, [&](int r) {
    hetcclConfig_t config = HETCCL_CONFIG_INITIALIZER;
    config.netName = transport && *transport ? transport : nullptr;
    rc[r] = hetcclCommInitRankConfig(&comms[r], n, id, r, &config);
  });
  for (int r = 0; r < n; ++r)
    if (rc[r] != hetcclSuccess) {
      for (auto c : comms)
        if (c) hetcclCommAbort(c);
      return {};
    }
  return comms;
}

inline bool rmaInitAll(const std::vector<hetcclComm_t>& comms) {
  std::vector<hetcclResult_t> rc(comms.size());
  onRanks(static_cast<int>(comms.size()), [&](int r) { rc[r] = hetcclRmaInit(comms[r]); });
  for (auto c : rc)
    if (c != hetcclSuccess) return false;
  return true;
}

class RmaTest : public ::testing::TestWithParam<const char*> {
 protected:
  /// n ranks of one job with RMA initialised, over GetParam()'s transport.
  void start(int n) {
    comms_ = makeJob(n, GetParam());
    ASSERT_EQ(static_cast<int>(comms_.size()), n) << hetcclGetLastError(nullptr);
    ASSERT_TRUE(rmaInitAll(comms_)) << hetcclGetLastError(nullptr);
  }
  void TearDown() override {
    for (auto c : comms_)
      if (c) hetcclCommAbort(c);
  }
  /// Registers buf on `rank` and returns the handle and its descriptor.
  hetcclMem_t reg(int rank, void* buf, size_t bytes, hetcclMemDesc_t* desc = nullptr) {
    hetcclMem_t m = nullptr;
    EXPECT_EQ(hetcclMemRegister(comms_[rank], buf, bytes, &m), hetcclSuccess) << hetcclGetLastError(nullptr);
    if (desc) {
      EXPECT_EQ(hetcclMemExport(m, desc), hetcclSuccess);
    }
    return m;
  }
  hetcclRemoteMem_t import(int rank, const hetcclMemDesc_t& desc) {
    hetcclRemoteMem_t r = nullptr;
    EXPECT_EQ(hetcclMemImport(comms_[rank], &desc, &r), hetcclSuccess) << hetcclGetLastError(nullptr);
    return r;
  }
  std::vector<hetcclComm_t> comms_;
};

inline std::string lastError() { return hetcclGetLastError(nullptr); }

}  // namespace hetccl::test
