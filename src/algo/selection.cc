#include "algo/selection.hpp"

#include "core/error.hpp"

namespace hetccl::algo {

bool vendorHier(const Topology& topology, const Tuning& tuning) {
  if (!topology.domainCollectives || topology.numDomains() < 2) return false;
  if (tuning.algo == AlgoChoice::Hier) return true;
  if (tuning.algo != AlgoChoice::Auto) return false;
  return topology.numDomains() < topology.nranks;  // some domain has several ranks
}

bool vendorHierAllReduce(const Topology& topology, size_t bytes, const Tuning& tuning) {
  if (!vendorHier(topology, tuning)) return false;
  return tuning.algo != AlgoChoice::Auto || !tuning.smallAllReduceByDoubling || bytes > tuning.smallBytes;
}

namespace {

// The band of HETCCL_TUNING_FILE that decides an all-reduce of `bytes` under auto, or nullptr.
const TuningBand* fileBandFor(const Tuning& tuning, size_t bytes) {
  if (tuning.algo != AlgoChoice::Auto) return nullptr;
  for (const TuningBand& band : tuning.allReduceBands)
    if (bytes <= band.maxBytes) return &band;
  return nullptr;
}

}  // namespace

size_t treeAllReduceMaxBytes(int nranks) {
  if (nranks >= 12) return size_t{4} << 20;
  if (nranks >= 8) return size_t{1} << 20;
  return 0;
}

AlgoChoice chooseAllReduce(const Topology& topology, size_t bytes, const Tuning& tuning) {
  if (tuning.algo != AlgoChoice::Auto) return tuning.algo;
  if (const TuningBand* band = fileBandFor(tuning, bytes)) return band->algo;
  if (topology.nranks == 2 && bytes <= tuning.pairExchangeBytes) return AlgoChoice::RecursiveDoubling;
  const bool oneRankEach = topology.numDomains() == topology.nranks;
  if (topology.numDomains() > 1 && !(oneRankEach && tuning.oneRankDomainsAsOneDomain))
    return tuning.smallAllReduceByDoubling && bytes <= tuning.smallBytes ? AlgoChoice::RecursiveDoubling
                                                                         : AlgoChoice::Hier;
  if (bytes <= tuning.smallBytes) return AlgoChoice::RecursiveDoubling;
  if (tuning.treeForManyRanks && bytes <= treeAllReduceMaxBytes(topology.nranks)) return AlgoChoice::Tree;
  return AlgoChoice::Ring;
}

bool rootedUsesTree(size_t bytes, const Tuning& tuning) {
  switch (tuning.algo) {
    case AlgoChoice::Tree:
    case AlgoChoice::RecursiveDoubling: return true;
    case AlgoChoice::Ring:
    case AlgoChoice::Hier: return false;
    case AlgoChoice::Auto: break;
  }
  return bytes <= tuning.smallBytes;
}

std::string describeChoice(const Topology& topology, CollKind kind, size_t bytes, const Tuning& tuning) {
  const bool vendor = vendorHier(topology, tuning);
  constexpr const char* kVendorReduce =
      "domain reduce-scatter (vendor) -> cross-domain reduction among each piece's owners (rings) -> ";
  switch (kind) {
    case CollKind::AllReduce: {
      if (vendorHierAllReduce(topology, bytes, tuning))
        return concat("hier-vendor: ", kVendorReduce, "domain all-gather (vendor), pipelined");
      const char* source = fileBandFor(tuning, bytes) ? " [HETCCL_TUNING_FILE]" : "";
      switch (chooseAllReduce(topology, bytes, tuning)) {
        case AlgoChoice::Hier:
          return concat("hier: domain ring reduce-scatter -> cross-domain reduction among each piece's owners -> "
                        "domain ring all-gather",
                        source);
        case AlgoChoice::Tree: return concat("tree: reduce to one rank, broadcast", source);
        case AlgoChoice::RecursiveDoubling: return concat("rd: recursive doubling", source);
        case AlgoChoice::Ring:
        case AlgoChoice::Auto: break;
      }
      return concat("ring: reduce-scatter + all-gather over every rank ordered by domain", source);
    }
    case CollKind::Reduce:
      if (vendor) return concat("hier-vendor: ", kVendorReduce, "domain all-gather in the root's domain (vendor)");
      return rootedUsesTree(bytes, tuning) ? "tree over every rank ordered by domain"
                                           : "chain (pipelined) over every rank ordered by domain";
    case CollKind::Broadcast:
      if (vendor)
        return "hier-vendor: domain broadcast (vendor) -> one block per member of each other domain (rings) -> "
               "domain all-gather (vendor), pipelined";
      return rootedUsesTree(bytes, tuning) ? "tree over every rank ordered by domain"
                                           : "chain (pipelined) over every rank ordered by domain";
    case CollKind::AllGather:
      if (vendor)
        return "hier-vendor: each block to the members of other domains whose share holds it (rings) -> domain "
               "all-gather (vendor) -> local copies";
      return "ring over every rank ordered by domain";
    case CollKind::ReduceScatter:
      if (vendor)
        return "hier-vendor: domain reduce-scatter of own block + foreign share (vendor) -> each share to its "
               "owner (rings)";
      return "ring over every rank ordered by domain";
    case CollKind::AllToAll:
    case CollKind::AllToAllv:
      return vendor ? "pairwise: blocks within the domain in one vendor exchange, the others on rings"
                    : "pairwise exchange (rings)";
    case CollKind::Send:
    case CollKind::Recv:
      return vendor ? "point-to-point: within the domain in one vendor exchange per group, else rings"
                    : "point-to-point (rings)";
  }
  return "unknown";
}

}  // namespace hetccl::algo
