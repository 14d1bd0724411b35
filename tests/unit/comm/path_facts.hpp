// Synthetic jobs for the path selector's tests (path_selector_test.cc, path_table_doc_test.cc): the facts
// each rank of a job would hand to choosePath(), built the way the communicator builds them.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "comm/path_selector.hpp"

namespace hetccl::path_test {

/// One rank of a synthetic job: device kind, host id, domain name.
struct RankSpec {
  DeviceKind kind;
  std::string host;
  std::string domain;
};

inline RankSpec gpu(std::string host, std::string domain) { return {DeviceKind::Cuda, std::move(host), std::move(domain)}; }
inline RankSpec hipGpu(std::string host, std::string domain) { return {DeviceKind::Hip, std::move(host), std::move(domain)}; }
inline RankSpec cpu(std::string host, std::string domain) { return {DeviceKind::Host, std::move(host), std::move(domain)}; }

/// The facts rank `rank` sees: peers (GPU rank r on device r), topology (domains numbered by first
/// appearance, as the communicator numbers them), the configuration, and — when the selector asks — which
/// ranks load the vendor library (`vendorMissing` do not).
inline PathFacts factsFor(const std::vector<RankSpec>& job, int rank, const std::string& gpuExec = "auto",
                          const std::string& vendorCcl = "auto", const std::vector<int>& vendorMissing = {}) {
  PathFacts f;
  f.rank = rank;
  f.gpuExec = gpuExec;
  f.vendorCcl = vendorCcl;
  f.topology.rank = rank;
  f.topology.nranks = static_cast<int>(job.size());
  std::map<std::string, int> domainIndex;
  for (size_t r = 0; r < job.size(); ++r) {
    PeerInfo p;
    p.rank = static_cast<int>(r);
    p.hostId = job[r].host;
    p.domain = job[r].domain;
    p.deviceKind = job[r].kind;
    p.deviceIndex = job[r].kind == DeviceKind::Host ? -1 : static_cast<int>(r);
    f.peers.push_back(p);
    auto [it, inserted] = domainIndex.emplace(p.domain, static_cast<int>(domainIndex.size()));
    f.topology.domainOf.push_back(it->second);
  }
  f.topology.validate();
  if (vendorProbeNeeded(f)) {  // what Communicator::probeVendor all-gathers
    f.vendorLoads.assign(job.size(), true);
    for (int r : vendorMissing) f.vendorLoads[r] = false;
    f.vendorName = "NCCL 2.28.9 from /fake/libnccl.so.2";
    for (int r : vendorMissing)
      if (r == rank) f.localVendorError = "no libnccl.so.2 found";
  }
  return f;
}

}  // namespace hetccl::path_test
