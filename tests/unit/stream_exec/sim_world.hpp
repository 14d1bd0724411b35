// N threads as ranks, each with a StreamExecutor on the simulated GPU (sim_gpu.hpp) over a real
// bootstrap and real shared-memory rings, and a user stream of its own. run() executes a case the way a
// user does: with work on the user's stream before and after the call (user_stream_work.hpp).
// With VendorDomains, every rank also gets a simulated vendor communicator over its domain
// (sim_vendor.hpp), which its executor uses for the intra-domain phases (DomainCollective steps).
// With Hosts, ranks act as ranks of several hosts (their descriptors' host ids differ): rings between
// hosts are private to each rank and mirrored by the executors' ring proxies over real transport
// connections (tcp or ucx, over loopback). Both may be given.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include "bootstrap_harness.hpp"
#include "transport/links/link_set.hpp"
#include "core/error.hpp"
#include "sim_gpu.hpp"
#include "sim_vendor.hpp"
#include "exec/pipeline/stream_executor.hpp"
#include "unit/algo/collective_case.hpp"
#include "user_stream_work.hpp"

namespace hetccl::test {

class SimWorld {
 public:
  /// Ranks without domain communicators: every byte between ranks goes through the rings.
  explicit SimWorld(const Layout& layout, std::function<void()> checkFailure = [] {})
      : SimWorld(layout, false, std::move(checkFailure)) {}
  /// Every rank gets a SimDomainComm over the members of its domain (layout.domainOf), in domain rank order.
  struct VendorDomains {};
  SimWorld(const Layout& layout, VendorDomains, std::function<void()> checkFailure = [] {})
      : SimWorld(layout, true, std::move(checkFailure)) {}
  /// Rank r on host "simhost<hostOf[r]>"; the ring proxies connect over `transport` (as HETCCL_TRANSPORT).
  struct Hosts {
    std::vector<int> hostOf;
    std::string transport = "tcp";
  };
  SimWorld(const Layout& layout, const Hosts& hosts, std::function<void()> checkFailure = [] {})
      : SimWorld(layout, false, std::move(checkFailure), &hosts) {}
  /// Both: a vendor communicator per domain (which may span hosts) and rings to other hosts mirrored.
  SimWorld(const Layout& layout, VendorDomains, const Hosts& hosts, std::function<void()> checkFailure = [] {})
      : SimWorld(layout, true, std::move(checkFailure), &hosts) {}
  ~SimWorld() {
    exec_.clear();         // before the domain communicators, the ring proxies' links and the bootstraps
    netLinks_.clear();
    domainComms_.clear();  // waits for their calls
    for (void* s : userStream_) sim::plugin().streamDestroy(s);
  }

  /// Runs the case eagerly (user-stream work, enqueue, drain on every rank); "" when exact.
  std::string run(CollCase c) {
    c.layout = layout_;
    return runCollCaseWith(c, [&](int r, std::span<const algo::CollOp> group) {
      UserStreamWork work(userStream_[r], group, size());
      exec_[r]->enqueue(group, userStream_[r]);
      work.afterCall();
      exec_[r]->drain();
      work.finish();
      // Work the group left running (it should leave none) must not write into buffers being checked.
      sim::waitIdle(std::chrono::seconds(30));
      if (!domainComms_.empty()) domainComms_[r]->checkAsyncError();  // a vendor call that failed on the device
      std::lock_guard<std::mutex> lock(mu_);
      if (!failures_[r].empty()) throw std::runtime_error(concat(failures_[r].front(), "\n", sim::dump()));
    });
  }

  /// Hosts only: rank r goes away as a dead process would, its connections closing under its peers
  /// (aborted first, so that its ring proxy lets go of them; its executor and links are then destroyed).
  void vanish(int r) {
    aborted_[r] = true;
    exec_[r].reset();
    netLinks_[r].reset();
  }

  int size() const { return static_cast<int>(exec_.size()); }
  const Layout& layout() const { return layout_; }
  stream_exec::StreamExecutor& exec(int r) { return *exec_[r]; }
  /// Rank r's vendor communicator (VendorDomains only).
  sim::SimDomainComm& domainComm(int r) { return *domainComms_.at(r); }
  void* userStream(int r) { return userStream_[r]; }
  std::atomic<bool>& aborted(int r) { return aborted_[r]; }
  std::vector<std::string> failuresOf(int r) {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_[r];
  }

 private:
  SimWorld(const Layout& layout, bool vendorDomains, std::function<void()> checkFailure, const Hosts* hosts = nullptr)
      : layout_(layout) {
    const int n = static_cast<int>(layout.domainOf.size());
    bootstrap::testing::JoinOptions join;
    if (hosts) join.tweak = [&](int r, int&, PeerInfo& self) { self.hostId = concat("simhost", hosts->hostOf.at(r)); };
    ranks_ = bootstrap::testing::joinAll(bootstrap::createUniqueId(), n, join);
    for (int r = 0; r < n; ++r)
      if (!ranks_[r].bootstrap) throw std::runtime_error(concat("rank ", r, " did not join: ", ranks_[r].error));
    exec_.resize(n);
    userStream_.resize(n);  // each process has its own (the null stream is per process too)
    for (int r = 0; r < n; ++r) sim::plugin().streamCreate(&userStream_[r]);
    failures_.resize(n);
    aborted_ = std::make_unique<std::atomic<bool>[]>(n);
    if (vendorDomains) domainComms_.resize(n);
    netLinks_.resize(n);
    bootstrap::testing::onEveryRank(ranks_, [&](int r, bootstrap::Bootstrap& boot) {
      const algo::Topology topology{r, n, layout.domainOf};
      if (hosts)
        netLinks_[r] = std::make_unique<transport::LinkSet>(boot, hosts->transport, &aborted_[r], Deadline::afterMs(20000),
                                                 transport::LinkScope::OtherHosts);
      if (vendorDomains)
        domainComms_[r].reset(static_cast<sim::SimDomainComm*>(
            vendor_.createComm(boot, topology.membersOf(layout.domainOf[r])).release()));
      exec_[r] = std::make_unique<stream_exec::StreamExecutor>(
          sim::plugin(), 0, boot, topology,
          [this, r](const std::exception& e) {
            std::lock_guard<std::mutex> lock(mu_);
            failures_[r].push_back(concat(typeid(e).name(), ": ", e.what()));
          },
          checkFailure, &aborted_[r], domainComms_.empty() ? nullptr : domainComms_[r].get(), netLinks_[r].get());
    });
  }

  Layout layout_;
  std::vector<bootstrap::testing::JoinResult> ranks_;
  sim::SimVendorCcl vendor_;
  std::vector<std::unique_ptr<sim::SimDomainComm>> domainComms_;  // VendorDomains: per rank
  std::vector<std::unique_ptr<transport::LinkSet>> netLinks_;                // Hosts: per rank, to the ranks on other hosts
  std::vector<std::unique_ptr<stream_exec::StreamExecutor>> exec_;
  std::vector<void*> userStream_;
  std::unique_ptr<std::atomic<bool>[]> aborted_;
  std::mutex mu_;
  std::vector<std::vector<std::string>> failures_;
};

}  // namespace hetccl::test
