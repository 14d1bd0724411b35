// Which domain and which (pretend) host each rank of a local job belongs to. Pure arithmetic: no I/O.
#pragma once

#include <string_view>
#include <vector>

namespace hetccl::run {

enum class LayoutKind {
  RoundRobin,  ///< rank r -> domain r % K (the default)
  Blocks,      ///< contiguous blocks, sizes differing by at most one, larger blocks first
  Sizes,       ///< explicit block sizes, e.g. "3,1": ranks 0..2 -> d0, rank 3 -> d1
};

struct DomainLayout {
  LayoutKind kind = LayoutKind::RoundRobin;
  std::vector<int> sizes;  ///< only for Sizes: each >= 1

  /// Parses "round-robin", "blocks" or a comma list of positive sizes ("3,1", "2,1,2").
  /// Throws InvalidArgument saying what was expected.
  static DomainLayout parse(std::string_view text);
};

/// The domain index (0..domains-1) of every rank. Every domain gets at least one rank. For Sizes,
/// `domains` must equal sizes.size() and the sizes must sum to `nranks`. Throws InvalidArgument when
/// nranks < 1, domains < 1, domains > nranks, or the sizes do not fit.
std::vector<int> assignDomains(int nranks, int domains, const DomainLayout& layout);

/// The host index (0..hosts-1) of every rank, round-robin. Throws InvalidArgument when hosts < 1 or
/// hosts > nranks (a host without ranks).
std::vector<int> assignHosts(int nranks, int hosts);

}  // namespace hetccl::run
