#include "comm/path_selector.hpp"

#include <set>

#include "core/config.hpp"
#include "core/error.hpp"
#include "exec/pipeline/stream_executor.hpp"

namespace hetccl {
namespace {

bool isGpuRank(const PeerInfo& p) { return p.deviceKind != DeviceKind::Host; }

// "1, 3, 4" (at most 8 ranks, then "...").
std::string rankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 8; ++i) out += concat(i ? ", " : "", ranks[i]);
  if (ranks.size() > 8) out += ", ...";
  return out;
}

// What every rank can see alike about the layout.
struct Layout {
  int nranks = 0;
  std::vector<int> cpuRanks;
  int hosts = 0;
  int domains = 0;
  bool oneDeviceKind = true;     // every rank the same kind of GPU (one vendor library can serve them all)
  bool oneKindPerDomain = true;  // the ranks of each domain the same kind (a vendor library per domain)
  std::string domainNames;    // "cuda, cuda2"
};

Layout layoutOf(const PathFacts& f) {
  Layout l;
  l.nranks = static_cast<int>(f.peers.size());
  std::set<std::string> hosts;
  for (const PeerInfo& p : f.peers) {
    if (!isGpuRank(p)) l.cpuRanks.push_back(p.rank);
    hosts.insert(p.hostId);
    l.oneDeviceKind = l.oneDeviceKind && p.deviceKind == f.peers.front().deviceKind;
  }
  l.hosts = static_cast<int>(hosts.size());
  l.domains = f.topology.numDomains();
  for (int d = 0; d < l.domains; ++d) {
    const int first = f.topology.membersOf(d).front();
    l.domainNames += concat(d ? ", " : "", f.peers[first].domain);
    for (int r : f.topology.membersOf(d))
      l.oneKindPerDomain = l.oneKindPerDomain && f.peers[r].deviceKind == f.peers[first].deviceKind;
  }
  return l;
}

bool allGpu(const Layout& l) { return l.cpuRanks.empty(); }
bool pipelinePossible(const Layout& l) { return allGpu(l) && l.nranks > 1; }
// Where auto takes the stream pipeline alone: GPU ranks of one host. Between hosts (rings mirrored by the
// ring proxy) auto takes it only with the vendor library inside the domains, where only the cross-domain
// share crosses the network (pipelineWithVendorByDefault); alone it runs there only when asked for
// (HETCCL_GPU_EXEC=pipeline): on two H100s it was no faster than host staging at 64-256 MiB.
bool pipelineByDefault(const Layout& l) { return pipelinePossible(l) && l.hosts == 1; }
// Where auto takes the stream pipeline with the vendor library inside each domain, when it loads on every
// rank: GPU ranks in several domains, each of one device kind, on one host or several.
bool pipelineWithVendorByDefault(const Layout& l) { return pipelinePossible(l) && l.domains > 1 && l.oneKindPerDomain; }

// Why the stream pipeline cannot run ("" when it can).
std::string pipelineBlocker(const Layout& l) {
  if (!allGpu(l))
    return concat(l.cpuRanks.size() == 1 ? "rank " : "ranks ", rankList(l.cpuRanks),
                  l.cpuRanks.size() == 1 ? " is a CPU rank" : " are CPU ranks");
  if (l.nranks == 1) return "a single rank has no peer to pipeline with";
  return "";
}

// True when the vendor library loaded on every rank (and is not switched off); else `why` says why not.
bool vendorOnEveryRank(const PathFacts& f, std::string& why) {
  if (f.vendorCcl == "off") {
    why = "HETCCL_VENDOR_CCL=off";
    return false;
  }
  if (f.vendorLoads.size() != f.peers.size()) {
    why = "the vendor library was not probed";
    return false;
  }
  std::vector<int> missing;
  for (size_t r = 0; r < f.vendorLoads.size(); ++r)
    if (!f.vendorLoads[r]) missing.push_back(static_cast<int>(r));
  if (missing.empty()) return true;
  why = concat("the vendor library does not load on ", missing.size() == 1 ? "rank " : "ranks ", rankList(missing));
  if (!f.localVendorError.empty()) why += concat(" (here: ", f.localVendorError, ")");
  return false;
}

// Two ranks of one domain on the same GPU of one host ("" when there are none): a vendor library refuses
// two ranks of one communicator on one device (NCCL: "Duplicate GPU detected").
std::string sharedGpuInADomain(const PathFacts& f) {
  for (size_t a = 0; a < f.peers.size(); ++a)
    for (size_t b = a + 1; b < f.peers.size(); ++b) {
      const PeerInfo &x = f.peers[a], &y = f.peers[b];
      if (x.domain == y.domain && x.hostId == y.hostId && x.deviceIndex == y.deviceIndex)
        return concat("ranks ", x.rank, " and ", y.rank, " of domain '", x.domain, "' share GPU ", x.deviceIndex,
                      " of host ", x.hostId, ", and a vendor communicator needs one GPU per rank");
    }
  return "";
}

void checkGpuExec(const std::string& mode) {
  if (mode != "auto" && mode != "pipeline" && mode != "staged")
    throw InvalidArgument(concat("HETCCL_GPU_EXEC='", mode, "' is not one of auto, pipeline, staged"));
}

void checkVendorCcl(const std::string& setting) {
  if (setting != "auto" && setting != "off" && setting != "nccl" && setting != "rccl")
    throw InvalidArgument(concat("HETCCL_VENDOR_CCL='", setting, "' is not one of auto, off, nccl, rccl"));
}

// The vendor libraries in words: one for the whole job, or one per domain when the domains' devices
// differ (each rank knows only its own, `here`).
std::string vendorWords(const Layout& l, const std::string& here) {
  return l.oneDeviceKind ? here : concat("the vendor library of each domain (here ", here, ")");
}

}  // namespace

bool vendorProbeNeeded(const PathFacts& f) {
  checkVendorCcl(f.vendorCcl);
  const Layout l = layoutOf(f);
  if (!allGpu(l) || f.vendorCcl == "off") return false;
  if (l.domains == 1) return l.oneDeviceKind;                                  // delegation
  return pipelineWithVendorByDefault(l) && f.gpuExec == "auto";  // vendor inside domains
}

PathChoice choosePath(const PathFacts& f) {
  const Layout l = layoutOf(f);
  PathChoice c;
  if (static_cast<int>(l.cpuRanks.size()) == l.nranks) {
    c.path = ExecPath::HostOnly;
    c.reason = "no rank has a GPU: every call has host buffers and runs on the host engine";
    return c;
  }
  checkGpuExec(f.gpuExec);
  checkVendorCcl(f.vendorCcl);
  std::string noVendor;
  bool vendor = false;
  if (l.domains == 1 ? l.oneDeviceKind : l.oneKindPerDomain)
    vendor = vendorOnEveryRank(f, noVendor);
  else if (l.domains == 1)
    noVendor = "the ranks have devices of several kinds: no one vendor library serves them all";
  else
    noVendor = "a domain has ranks with devices of several kinds: no one vendor library serves it";
  if (allGpu(l) && l.domains == 1 && vendor) {
    c.path = ExecPath::VendorDelegation;
    c.reason = concat("every rank is a GPU rank of domain '", l.domainNames, "' and ", f.vendorName,
                      " loads on every rank: each device call is handed to it on the caller's stream");
    return c;
  }
  // Not delegated. In a single all-GPU domain, say why first.
  const std::string notDelegated =
      allGpu(l) && l.domains == 1 ? concat("no delegation to a vendor library (", noVendor, "); ") : "";
  if (f.gpuExec == "staged") {
    c.path = ExecPath::Staged;
    c.reason = concat(notDelegated, "HETCCL_GPU_EXEC=staged");
    return c;
  }
  if (!pipelinePossible(l)) {
    c.path = ExecPath::Staged;
    c.reason = concat(notDelegated, pipelineBlocker(l),
                      ", and the stream pipeline needs every rank a GPU rank (at least two ranks)");
    if (f.gpuExec == "pipeline") {
      c.warn = true;
      c.reason = concat("HETCCL_GPU_EXEC=pipeline cannot be honoured: ", c.reason);
    }
    return c;
  }
  const std::string shared = l.domains > 1 && vendor ? sharedGpuInADomain(f) : "";
  if (!shared.empty()) {
    vendor = false;
    noVendor = shared;
  }
  const bool vendorInDomains = l.domains > 1 && f.gpuExec == "auto" && vendor;
  if (!pipelineByDefault(l) && !vendorInDomains && f.gpuExec == "auto") {
    c.path = ExecPath::Staged;
    const std::string noDomainVendor = l.domains > 1 ? concat(" and no vendor library inside domains (", noVendor, ")") : "";
    c.reason = concat(notDelegated, "GPU ranks on ", l.hosts, " hosts", noDomainVendor,
                      ": host staging (HETCCL_GPU_EXEC=pipeline runs the stream pipeline between them, its rings "
                      "mirrored over the network)");
    return c;
  }
  const std::string hostWords = l.hosts == 1 ? "one host" : concat(l.hosts, " hosts");
  const std::string where = l.domains == 1
                                ? concat("GPU ranks of ", hostWords, " in domain '", l.domainNames, "'")
                                : concat("GPU ranks of ", hostWords, " in ", l.domains, " domains (", l.domainNames, ")");
  if (vendorInDomains) {
    c.path = ExecPath::PipelineWithDomainVendor;
    c.reason = concat(where, " and ", vendorWords(l, f.vendorName),
                      " loads on every rank: a vendor communicator per domain runs the phases inside each domain, "
                      "the stream pipeline moves the rest between domains",
                      l.hosts > 1 ? " (rings to other hosts mirrored over the network)" : "");
    return c;
  }
  c.path = ExecPath::Pipeline;
  if (l.domains == 1)
    c.reason = concat(notDelegated, where);
  else if (f.gpuExec == "pipeline")
    c.reason = concat(where, "; HETCCL_GPU_EXEC=pipeline: no vendor library inside domains");
  else
    c.reason = concat(where, "; no vendor library inside domains (", noVendor, ")");
  return c;
}

PathChoice withoutDomainVendor(const PathChoice& chosen, const std::string& why) {
  PathChoice c;
  c.path = ExecPath::Pipeline;
  c.warn = true;
  c.reason = concat(chosen.reason, "; but ", why, ": the stream pipeline runs without the vendor library");
  return c;
}

PlannerSettings plannerSettingsFor(ExecPath path, const algo::Topology& topology, const algo::Tuning& hostTuning,
                                   bool severalHosts) {
  PlannerSettings s;
  s.topology = topology;
  s.tuning = hostTuning;
  switch (path) {
    case ExecPath::VendorDelegation:
      s.planned = false;
      break;
    case ExecPath::PipelineWithDomainVendor:
      s.topology.domainCollectives = true;
      s.tuning = stream_exec::StreamExecutor::tuningFromConfig(severalHosts);
      break;
    case ExecPath::Pipeline:
      s.tuning = stream_exec::StreamExecutor::tuningFromConfig(severalHosts);
      break;
    case ExecPath::HostOnly:
    case ExecPath::Staged:
      break;
  }
  return s;
}

}  // namespace hetccl
