// N threads as ranks, each with a StreamExecutor on the simulated GPU (sim_gpu.hpp) over a real
// bootstrap and real shared-memory rings, and a user stream of its own.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"
#include "sim_gpu.hpp"
#include "stream_exec/stream_executor.hpp"
#include "unit/algo/collective_case.hpp"

namespace hetccl::test {

class SimWorld {
 public:
  explicit SimWorld(const Layout& layout, std::function<void()> checkFailure = [] {}) : layout_(layout) {
    const int n = static_cast<int>(layout.domainOf.size());
    ranks_ = bootstrap::testing::joinAll(bootstrap::createUniqueId(), n);
    for (int r = 0; r < n; ++r)
      if (!ranks_[r].bootstrap) throw std::runtime_error(concat("rank ", r, " did not join: ", ranks_[r].error));
    exec_.resize(n);
    userStream_.resize(n);  // each process has its own (the null stream is per process too)
    for (int r = 0; r < n; ++r) sim::plugin().streamCreate(&userStream_[r]);
    failures_.resize(n);
    aborted_ = std::make_unique<std::atomic<bool>[]>(n);
    bootstrap::testing::onEveryRank(ranks_, [&](int r, bootstrap::Bootstrap& boot) {
      exec_[r] = std::make_unique<stream_exec::StreamExecutor>(
          sim::plugin(), 0, boot, algo::Topology{r, n, layout.domainOf},
          [this, r](const std::exception& e) {
            std::lock_guard<std::mutex> lock(mu_);
            failures_[r].push_back(concat(typeid(e).name(), ": ", e.what()));
          },
          checkFailure, &aborted_[r]);
    });
  }
  ~SimWorld() {
    exec_.clear();  // before the bootstraps
    for (void* s : userStream_) sim::plugin().streamDestroy(s);
  }

  /// Runs the case eagerly (enqueue + drain on every rank); "" when exact.
  std::string run(CollCase c) {
    c.layout = layout_;
    return runCollCaseWith(c, [&](int r, std::span<const algo::CollOp> group) {
      exec_[r]->enqueue(group, userStream_[r]);
      exec_[r]->drain();
      std::lock_guard<std::mutex> lock(mu_);
      if (!failures_[r].empty()) throw std::runtime_error(concat(failures_[r].front(), "\n", sim::dump()));
    });
  }

  int size() const { return static_cast<int>(exec_.size()); }
  const Layout& layout() const { return layout_; }
  stream_exec::StreamExecutor& exec(int r) { return *exec_[r]; }
  void* userStream(int r) { return userStream_[r]; }
  std::atomic<bool>& aborted(int r) { return aborted_[r]; }
  std::vector<std::string> failuresOf(int r) {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_[r];
  }

 private:
  Layout layout_;
  std::vector<bootstrap::testing::JoinResult> ranks_;
  std::vector<std::unique_ptr<stream_exec::StreamExecutor>> exec_;
  std::vector<void*> userStream_;
  std::unique_ptr<std::atomic<bool>[]> aborted_;
  std::mutex mu_;
  std::vector<std::vector<std::string>> failures_;
};

}  // namespace hetccl::test
