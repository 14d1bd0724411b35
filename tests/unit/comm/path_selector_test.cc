// The path selector's decision table (src/comm/path_selector.hpp) over synthetic peer lists: which way
// device-buffer calls run for each layout, configuration and vendor availability, with its reason; every
// rank of a layout takes the same decision; how the planner is then called (hetccl-info's table).
#include "comm/path_selector.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bootstrap_harness.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "path_facts.hpp"

namespace hetccl {
namespace {

using bootstrap::testing::ScopedEnv;
using namespace path_test;

/// The decision of every rank; fails the test unless they are all the same path. Returns rank 0's.
PathChoice decide(const std::vector<RankSpec>& job, const std::string& gpuExec = "auto",
                  const std::string& vendorCcl = "auto", const std::vector<int>& vendorMissing = {}) {
  const PathChoice first = choosePath(factsFor(job, 0, gpuExec, vendorCcl, vendorMissing));
  for (int r = 1; r < static_cast<int>(job.size()); ++r) {
    const PathChoice c = choosePath(factsFor(job, r, gpuExec, vendorCcl, vendorMissing));
    EXPECT_EQ(c.path, first.path) << "rank " << r << " decides otherwise: " << c.reason;
    EXPECT_EQ(c.warn, first.warn) << "rank " << r;
  }
  return first;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::vector<RankSpec> kOneDomain = {gpu("h", "cuda"), gpu("h", "cuda"), gpu("h", "cuda")};
const std::vector<RankSpec> kTwoDomains = {gpu("h", "d0"), gpu("h", "d0"), gpu("h", "d1"), gpu("h", "d1")};

TEST(PathSelectorTest, SingleDomainAllGpuWithTheVendorEverywhereDelegates) {
  for (const char* mode : {"auto", "pipeline", "staged"}) {  // HETCCL_GPU_EXEC does not touch delegation
    EXPECT_TRUE(vendorProbeNeeded(factsFor(kOneDomain, 0, mode)));
    const PathChoice c = decide(kOneDomain, mode);
    EXPECT_EQ(c.path, ExecPath::VendorDelegation) << mode << ": " << c.reason;
    EXPECT_TRUE(has(c.reason, "domain 'cuda'")) << c.reason;
    EXPECT_TRUE(has(c.reason, "NCCL 2.28.9")) << c.reason;
  }
  // Also across hosts and for a single rank: the vendor library connects them itself.
  EXPECT_EQ(decide({gpu("a", "cuda"), gpu("b", "cuda")}).path, ExecPath::VendorDelegation);
  EXPECT_EQ(decide({gpu("a", "cuda")}).path, ExecPath::VendorDelegation);
}

TEST(PathSelectorTest, SeveralDomainsOfOneHostAllGpuWithTheVendorGetThePipelineWithVendorDomains) {
  EXPECT_TRUE(vendorProbeNeeded(factsFor(kTwoDomains, 0)));
  const PathChoice c = decide(kTwoDomains);
  EXPECT_EQ(c.path, ExecPath::PipelineWithDomainVendor) << c.reason;
  EXPECT_FALSE(c.warn);
  EXPECT_TRUE(has(c.reason, "2 domains (d0, d1)")) << c.reason;
  EXPECT_TRUE(has(c.reason, "vendor communicator per domain")) << c.reason;
  // Domains of one rank each (2x1) and unequal ones (2+1) too.
  EXPECT_EQ(decide({gpu("h", "a"), gpu("h", "b")}).path, ExecPath::PipelineWithDomainVendor);
  EXPECT_EQ(decide({gpu("h", "a"), gpu("h", "b"), gpu("h", "a")}).path, ExecPath::PipelineWithDomainVendor);
}

TEST(PathSelectorTest, VendorMissingOnOneRankGivesThePipelineNamingThatRank) {
  const PathChoice c = decide(kTwoDomains, "auto", "auto", {2});
  EXPECT_EQ(c.path, ExecPath::Pipeline) << c.reason;
  EXPECT_TRUE(has(c.reason, "does not load on rank 2")) << c.reason;
  // The rank that could not load it says why.
  const PathChoice onRank2 = choosePath(factsFor(kTwoDomains, 2, "auto", "auto", {2}));
  EXPECT_TRUE(has(onRank2.reason, "no libnccl.so.2 found")) << onRank2.reason;
  // One domain: no delegation, and the stream pipeline serves it (GPU ranks of one host).
  const PathChoice one = decide(kOneDomain, "auto", "auto", {0, 1});
  EXPECT_EQ(one.path, ExecPath::Pipeline) << one.reason;
  EXPECT_TRUE(has(one.reason, "no delegation")) << one.reason;
  EXPECT_TRUE(has(one.reason, "ranks 0, 1")) << one.reason;
  // One domain on two hosts: host staging.
  EXPECT_EQ(decide({gpu("a", "cuda"), gpu("b", "cuda")}, "auto", "auto", {1}).path, ExecPath::Staged);
  // A single GPU rank without the vendor library: nothing to pipeline with.
  EXPECT_EQ(decide({gpu("a", "cuda")}, "auto", "auto", {0}).path, ExecPath::Staged);
}

TEST(PathSelectorTest, VendorCclOffIsNeverProbedAndNeverUsed) {
  EXPECT_FALSE(vendorProbeNeeded(factsFor(kTwoDomains, 0, "auto", "off")));
  EXPECT_FALSE(vendorProbeNeeded(factsFor(kOneDomain, 0, "auto", "off")));
  const PathChoice two = decide(kTwoDomains, "auto", "off");
  EXPECT_EQ(two.path, ExecPath::Pipeline) << two.reason;
  EXPECT_TRUE(has(two.reason, "HETCCL_VENDOR_CCL=off")) << two.reason;
  const PathChoice one = decide(kOneDomain, "auto", "off");
  EXPECT_EQ(one.path, ExecPath::Pipeline) << one.reason;
  EXPECT_TRUE(has(one.reason, "HETCCL_VENDOR_CCL=off")) << one.reason;
  EXPECT_EQ(decide({gpu("a", "cuda"), gpu("b", "cuda")}, "auto", "off").path, ExecPath::Staged);
}

TEST(PathSelectorTest, GpuExecPipelineKeepsTheVendorOutOfTheDomains) {
  EXPECT_FALSE(vendorProbeNeeded(factsFor(kTwoDomains, 0, "pipeline")));
  const PathChoice c = decide(kTwoDomains, "pipeline");
  EXPECT_EQ(c.path, ExecPath::Pipeline) << c.reason;
  EXPECT_FALSE(c.warn);
  EXPECT_TRUE(has(c.reason, "HETCCL_GPU_EXEC=pipeline")) << c.reason;
}

TEST(PathSelectorTest, GpuExecStagedStagesEveryLayoutThatIsNotDelegated) {
  EXPECT_FALSE(vendorProbeNeeded(factsFor(kTwoDomains, 0, "staged")));
  const PathChoice c = decide(kTwoDomains, "staged");
  EXPECT_EQ(c.path, ExecPath::Staged) << c.reason;
  EXPECT_TRUE(has(c.reason, "HETCCL_GPU_EXEC=staged")) << c.reason;
  EXPECT_EQ(decide(kOneDomain, "staged", "off").path, ExecPath::Staged);
}

TEST(PathSelectorTest, ACpuRankMeansHostStaging) {
  const std::vector<RankSpec> mixed = {gpu("h", "cuda"), cpu("h", "host"), gpu("h", "cuda")};
  EXPECT_FALSE(vendorProbeNeeded(factsFor(mixed, 0)));
  const PathChoice c = decide(mixed);
  EXPECT_EQ(c.path, ExecPath::Staged) << c.reason;
  EXPECT_TRUE(has(c.reason, "rank 1 is a CPU rank")) << c.reason;
  EXPECT_FALSE(c.warn);
  // A CPU rank in the GPUs' own domain: no delegation either.
  const std::vector<RankSpec> sameDomain = {gpu("h", "x"), cpu("h", "x")};
  EXPECT_FALSE(vendorProbeNeeded(factsFor(sameDomain, 0)));
  EXPECT_EQ(decide(sameDomain).path, ExecPath::Staged);
  // Asking for the pipeline does not make it possible: staged, said at WARN.
  const PathChoice forced = decide(mixed, "pipeline");
  EXPECT_EQ(forced.path, ExecPath::Staged);
  EXPECT_TRUE(forced.warn);
  EXPECT_TRUE(has(forced.reason, "HETCCL_GPU_EXEC=pipeline cannot be honoured")) << forced.reason;
}

TEST(PathSelectorTest, DomainVendorCommunicatorsThatCannotBeCreatedLeaveThePipelineAlone) {
  const PathChoice c = withoutDomainVendor(decide(kTwoDomains), "NCCL refused the communicator of domain 'd0'");
  EXPECT_EQ(c.path, ExecPath::Pipeline);
  EXPECT_TRUE(c.warn);
  EXPECT_TRUE(has(c.reason, "NCCL refused the communicator of domain 'd0'")) << c.reason;
  EXPECT_TRUE(has(c.reason, "without the vendor library")) << c.reason;
}

TEST(PathSelectorTest, SeveralHostsWithTheVendorInEveryDomainGetThePipelineWithVendorDomains) {
  // A domain per host (vendor-homogeneous hosts: the layout of a mixed cluster), domains across hosts, a
  // domain spanning two hosts next to one of a third, domains of one rank.
  const std::vector<std::vector<RankSpec>> layouts = {
      {gpu("a", "nv"), gpu("a", "nv"), gpu("b", "amd"), gpu("b", "amd")},
      {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")},
      {gpu("a", "nv"), gpu("b", "nv"), gpu("c", "amd"), gpu("c", "amd")},
      {gpu("a", "d0"), gpu("b", "d1")}};
  for (const auto& job : layouts) {
    EXPECT_TRUE(vendorProbeNeeded(factsFor(job, 0)));
    const PathChoice c = decide(job);
    EXPECT_EQ(c.path, ExecPath::PipelineWithDomainVendor) << c.reason;
    EXPECT_FALSE(c.warn) << c.reason;
    EXPECT_TRUE(has(c.reason, "vendor communicator per domain")) << c.reason;
    EXPECT_TRUE(has(c.reason, "mirrored over the network")) << c.reason;
  }
}

TEST(PathSelectorTest, SeveralHostsWithoutTheVendorInDomainsMeanHostStaging) {
  const std::vector<RankSpec> twoHosts = {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")};
  // The vendor library missing on one rank.
  const PathChoice missing = decide(twoHosts, "auto", "auto", {3});
  EXPECT_EQ(missing.path, ExecPath::Staged) << missing.reason;
  EXPECT_TRUE(has(missing.reason, "on 2 hosts")) << missing.reason;
  EXPECT_TRUE(has(missing.reason, "does not load on rank 3")) << missing.reason;
  EXPECT_TRUE(has(missing.reason, "HETCCL_GPU_EXEC=pipeline")) << missing.reason;  // says how to get the pipeline
  // Switched off: never probed.
  EXPECT_FALSE(vendorProbeNeeded(factsFor(twoHosts, 0, "auto", "off")));
  const PathChoice off = decide(twoHosts, "auto", "off");
  EXPECT_EQ(off.path, ExecPath::Staged) << off.reason;
  EXPECT_TRUE(has(off.reason, "HETCCL_VENDOR_CCL=off")) << off.reason;
  // Two ranks of one domain on one GPU of one host: the vendor would refuse them.
  const std::vector<RankSpec> shared = {gpu("a", "d0"), gpu("a", "d0"), gpu("b", "d1")};
  std::vector<PathFacts> facts;
  for (int r = 0; r < 3; ++r) {
    facts.push_back(factsFor(shared, r));
    facts.back().peers[1].deviceIndex = facts.back().peers[0].deviceIndex;
  }
  for (const PathFacts& f : facts) {
    const PathChoice c = choosePath(f);
    EXPECT_EQ(c.path, ExecPath::Staged) << c.reason;
    EXPECT_TRUE(has(c.reason, "share GPU")) << c.reason;
  }
}

TEST(PathSelectorTest, PipelineAcrossHostsWhenAskedForWithoutTheVendorInDomains) {
  const std::vector<RankSpec> twoHosts = {gpu("a", "d0"), gpu("a", "d1"), gpu("b", "d0"), gpu("b", "d1")};
  EXPECT_FALSE(vendorProbeNeeded(factsFor(twoHosts, 0, "pipeline")));
  const PathChoice c = decide(twoHosts, "pipeline");
  EXPECT_EQ(c.path, ExecPath::Pipeline) << c.reason;
  EXPECT_FALSE(c.warn) << c.reason;
  EXPECT_TRUE(has(c.reason, "GPU ranks of 2 hosts in 2 domains")) << c.reason;
  // A CPU rank still stages, and says that the pipeline was asked for in vain.
  const PathChoice mixed = decide({gpu("a", "d0"), cpu("b", "d1")}, "pipeline");
  EXPECT_EQ(mixed.path, ExecPath::Staged) << mixed.reason;
  EXPECT_TRUE(mixed.warn);
}

TEST(PathSelectorTest, NoGpuAnywhereIsHostOnlyWhateverTheConfiguration) {
  const std::vector<RankSpec> cpus = {cpu("h", "host"), cpu("h", "host2")};
  EXPECT_FALSE(vendorProbeNeeded(factsFor(cpus, 0)));
  EXPECT_EQ(decide(cpus).path, ExecPath::HostOnly);
  EXPECT_EQ(decide(cpus, "nonsense").path, ExecPath::HostOnly);  // not read without a GPU (as before)
}

TEST(PathSelectorTest, AnUnknownGpuExecIsRefusedOnEveryRank) {
  for (int r = 0; r < 4; ++r) {
    try {
      choosePath(factsFor(kTwoDomains, r, "fast"));
      ADD_FAILURE() << "rank " << r << " accepted HETCCL_GPU_EXEC=fast";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(has(e.what(), "HETCCL_GPU_EXEC='fast' is not one of auto, pipeline, staged")) << e.what();
    }
  }
}

TEST(PathSelectorTest, DevicesOfSeveralKindsInOneDomainAreNotDelegated) {
  const std::vector<RankSpec> mixedKinds = {gpu("h", "x"), {DeviceKind::Hip, "h", "x"}};
  EXPECT_FALSE(vendorProbeNeeded(factsFor(mixedKinds, 0)));
  const PathChoice c = decide(mixedKinds);
  EXPECT_EQ(c.path, ExecPath::Pipeline) << c.reason;
  EXPECT_TRUE(has(c.reason, "several kinds")) << c.reason;
}

TEST(PathSelectorTest, CudaDomainAndHipDomainOfOneHostEachGetTheirVendor) {
  const std::vector<RankSpec> mixed = {gpu("h", "cuda"), gpu("h", "cuda"), {DeviceKind::Hip, "h", "hip"},
                                       {DeviceKind::Hip, "h", "hip"}};
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(vendorProbeNeeded(factsFor(mixed, r))) << r;
  const PathChoice each = decide(mixed);
  EXPECT_EQ(each.path, ExecPath::PipelineWithDomainVendor) << each.reason;
  EXPECT_TRUE(has(each.reason, "the vendor library of each domain")) << each.reason;
  // A domain mixing both kinds cannot have one: the pipeline alone, saying why.
  const std::vector<RankSpec> mixedDomain = {gpu("h", "a"), {DeviceKind::Hip, "h", "a"}, gpu("h", "b")};
  EXPECT_FALSE(vendorProbeNeeded(factsFor(mixedDomain, 0)));
  const PathChoice c = decide(mixedDomain);
  EXPECT_EQ(c.path, ExecPath::Pipeline) << c.reason;
  EXPECT_TRUE(has(c.reason, "a domain has ranks with devices of several kinds")) << c.reason;
}

TEST(PathSelectorTest, UnknownVendorSettingIsRejectedOnEveryRank) {
  for (int r = 0; r < 4; ++r) {
    try {
      factsFor(kTwoDomains, r, "auto", "mccl");
      ADD_FAILURE() << "rank " << r << " accepted HETCCL_VENDOR_CCL=mccl";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(has(e.what(), "HETCCL_VENDOR_CCL='mccl' is not one of auto, off, nccl, rccl")) << e.what();
    }
  }
  EXPECT_EQ(decide(kTwoDomains, "auto", "rccl").path, ExecPath::PipelineWithDomainVendor);
}

TEST(PathSelectorTest, PlannerSettingsFollowThePath) {
  const algo::Topology topology = factsFor(kTwoDomains, 1).topology;
  algo::Tuning host;
  host.chunkBytes = 12345;
  PlannerSettings withVendor, pipeline, withVendorHosts;
  {
    ScopedEnv chunk("HETCCL_GPU_CHUNK_BYTES", "1000001");  // rounded up to 64 bytes, as the ring slot is
    ScopedEnv pair("HETCCL_GPU_PAIR_EXCHANGE_BYTES", "8M");
    ScopedEnv minChunk("HETCCL_GPU_MIN_CHUNK_BYTES", "256K");
    ScopedEnv netMinChunk("HETCCL_HIER_NET_MIN_CHUNK_BYTES", "8M");
    reloadConfig();
    withVendor = plannerSettingsFor(ExecPath::PipelineWithDomainVendor, topology, host);
    pipeline = plannerSettingsFor(ExecPath::Pipeline, topology, host);
    withVendorHosts = plannerSettingsFor(ExecPath::PipelineWithDomainVendor, topology, host, /*severalHosts=*/true);
  }
  reloadConfig();  // the environment as it was
  EXPECT_TRUE(withVendor.planned);
  EXPECT_TRUE(withVendor.topology.domainCollectives);
  EXPECT_EQ(withVendor.topology.rank, 1);
  EXPECT_EQ(withVendor.tuning.chunkBytes, 1000064u);
  EXPECT_EQ(withVendor.tuning.pairExchangeBytes, size_t{8} << 20);
  EXPECT_FALSE(pipeline.topology.domainCollectives);
  EXPECT_EQ(pipeline.tuning.chunkBytes, 1000064u);
  // The hierarchical chunks' floor: the pipeline's own on one host, the network one across hosts.
  EXPECT_EQ(withVendor.tuning.hierMinChunkBytes, size_t{256} << 10);
  EXPECT_EQ(withVendorHosts.tuning.hierMinChunkBytes, size_t{8} << 20);
  EXPECT_EQ(withVendorHosts.tuning.minChunkBytes, size_t{256} << 10);

  const PlannerSettings staged = plannerSettingsFor(ExecPath::Staged, topology, host);
  EXPECT_TRUE(staged.planned);
  EXPECT_FALSE(staged.topology.domainCollectives);
  EXPECT_EQ(staged.tuning.chunkBytes, 12345u);

  EXPECT_FALSE(plannerSettingsFor(ExecPath::VendorDelegation, topology, host).planned);
}

}  // namespace
}  // namespace hetccl

namespace hetccl {
namespace {

TEST(PathSelectorSharedGpu, TwoRanksOfOneDomainOnOneGpuKeepTheVendorOutOfTheDomains) {
  // 2+2 on one GPU (every rank on device 0): NCCL would refuse each domain's communicator.
  for (int rank = 0; rank < 4; ++rank) {
    PathFacts f = factsFor(kTwoDomains, rank);
    for (PeerInfo& p : f.peers) p.deviceIndex = 0;
    const PathChoice c = choosePath(f);
    EXPECT_EQ(c.path, ExecPath::Pipeline) << c.reason;
    EXPECT_TRUE(has(c.reason, "ranks 0 and 1 of domain 'd0' share GPU 0")) << c.reason;
  }
  // One rank per domain on one GPU is fine (each vendor communicator has one rank).
  PathFacts f = factsFor({gpu("h", "a"), gpu("h", "b")}, 0);
  for (PeerInfo& p : f.peers) p.deviceIndex = 0;
  EXPECT_EQ(choosePath(f).path, ExecPath::PipelineWithDomainVendor);
}

}  // namespace
}  // namespace hetccl
