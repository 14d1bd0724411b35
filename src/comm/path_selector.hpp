// Which way a communicator's device-buffer calls run, decided once at init from what every rank knows
// alike: the peers (device kind, host, domain), the configuration (HETCCL_GPU_EXEC, HETCCL_VENDOR_CCL,
// compared between ranks at init) and whether the vendor collective library loads on every rank (one
// all-gather, only when the answer matters). Every rank therefore takes the same decision. Pure
// functions: tests/unit/comm/path_selector_test.cc runs the decision table over synthetic peer lists.
//
// The decision table itself is not written out here: tests/unit/comm/path_table_doc_test.cc runs
// representative layouts through these functions and renders the result into docs/DESIGN.md (between
// `<!-- path-table:begin -->` and `<!-- path-table:end -->`); the test fails when that block differs
// (HETCCL_WRITE_DOCS=1 rewrites it).
// "Vendor on every rank" also needs HETCCL_VENDOR_CCL other than "off". Each rank loads the flavour of
// its own device (NCCL for cuda, RCCL for hip): delegation needs one device kind on every rank, the vendor
// inside domains one device kind per domain (a CUDA domain and a HIP domain of one host each get theirs).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "algo/topology.hpp"
#include "algo/tuning.hpp"
#include "core/peer_info.hpp"
#include "exec/base/exec_path.hpp"

namespace hetccl {

/// What the decision is made from; identical on every rank except `rank` and `localVendorError`.
struct PathFacts {
  int rank = 0;
  std::vector<PeerInfo> peers;     ///< every rank's descriptor, in rank order
  algo::Topology topology;         ///< dense domain indices (Communicator's numbering)
  std::string gpuExec = "auto";    ///< HETCCL_GPU_EXEC: auto, pipeline, staged
  std::string vendorCcl = "auto";  ///< HETCCL_VENDOR_CCL: auto, off (no vendor library anywhere), nccl, rccl
  /// Filled when vendorProbeNeeded(): whether the vendor library loaded on each rank (the all-rank
  /// agreement), its description where it did, and this rank's error where it did not.
  std::vector<bool> vendorLoads;
  std::string vendorName;        ///< e.g. "NCCL 2.28.9 from /usr/lib/.../libnccl.so.2"
  std::string localVendorError;  ///< why it did not load on this rank ("" when it did)
};

struct PathChoice {
  ExecPath path = ExecPath::HostOnly;
  std::string reason;  ///< in words, for the INFO log and hetccl-info --comm
  /// Logged at WARN, not INFO: HETCCL_GPU_EXEC=pipeline could not be honoured, or the vendor
  /// communicators of the domains could not be created.
  bool warn = false;
};

/// True when the choice depends on whether the vendor library loads on every rank: every rank is a GPU
/// rank, HETCCL_VENDOR_CCL is not "off", and either all ranks form one domain (delegation) or they are
/// more than one, in several domains of one device kind each, with HETCCL_GPU_EXEC=auto (vendor inside
/// domains, on one host or several). Then every rank tries
/// to load it and the answers are all-gathered into `facts.vendorLoads` before choosePath().
bool vendorProbeNeeded(const PathFacts& facts);

/// The decision table above. Throws InvalidArgument for a HETCCL_GPU_EXEC other than auto, pipeline,
/// staged (when any rank has a GPU), on every rank alike.
PathChoice choosePath(const PathFacts& facts);

/// The choice when PipelineWithDomainVendor was chosen but the vendor communicators of the domains could
/// not be created on every rank (all-gathered after the attempt, so every rank falls back alike; e.g.
/// NCCL refuses two ranks of one domain on one GPU): the stream pipeline alone, `why` in the reason,
/// said at WARN.
PathChoice withoutDomainVendor(const PathChoice& chosen, const std::string& why);

/// How the planner is called for device-buffer calls on `path` (hetccl-info's algorithm table):
/// the topology (domainCollectives set for PipelineWithDomainVendor) and the tuning (the stream
/// pipeline's HETCCL_GPU_* values for the pipelines, and HETCCL_HIER_NET_MIN_CHUNK_BYTES when the ranks
/// are on several hosts; `hostTuning` for host staging and host calls).
/// `planned` is false for vendor delegation: the vendor library chooses its own algorithms.
struct PlannerSettings {
  bool planned = true;
  algo::Topology topology;
  algo::Tuning tuning;
};
PlannerSettings plannerSettingsFor(ExecPath path, const algo::Topology& topology, const algo::Tuning& hostTuning,
                                   bool severalHosts = false);

}  // namespace hetccl
