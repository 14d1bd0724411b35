// Threads-as-ranks fixture for tests of the public C API: hetcclCommInitAll makes N communicators in
// this process; forEachRank runs one function per rank on its own thread (blocking calls need that).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "hetccl/hetccl.h"

namespace hetccl::test {

class ApiTest : public ::testing::Test {
 protected:
  void initAll(int n) {
    comms_.assign(n, nullptr);
    ASSERT_EQ(hetcclCommInitAll(comms_.data(), n, nullptr), hetcclSuccess) << hetcclGetLastError(nullptr);
  }
  void TearDown() override {
    for (auto c : comms_)
      if (c) hetcclCommAbort(c);
  }
  /// Runs fn(rank) on one thread per rank and joins them.
  void forEachRank(const std::function<void(int)>& fn) {
    std::vector<std::thread> threads;
    for (int r = 0; r < static_cast<int>(comms_.size()); ++r) threads.emplace_back(fn, r);
    for (auto& t : threads) t.join();
  }
  std::vector<hetcclComm_t> comms_;
};

}  // namespace hetccl::test
