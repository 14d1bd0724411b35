#include "algo/topology.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hetccl::algo {

Topology Topology::singleDomain(int rank, int nranks) {
  return Topology{rank, nranks, std::vector<int>(static_cast<size_t>(nranks), 0)};
}

int Topology::numDomains() const {
  int d = 0;
  for (int x : domainOf) d = std::max(d, x + 1);
  return d;
}

std::vector<int> Topology::membersOf(int d) const {
  std::vector<int> out;
  for (int r = 0; r < nranks; ++r)
    if (domainOf[r] == d) out.push_back(r);
  return out;
}

std::vector<int> Topology::domainOrder() const {
  std::vector<int> out;
  for (int d = 0; d < numDomains(); ++d)
    for (int r : membersOf(d)) out.push_back(r);
  return out;
}

void Topology::validate() const {
  if (nranks < 1 || rank < 0 || rank >= nranks)
    throw InvalidArgument(concat("topology: rank ", rank, " of ", nranks, " is out of range"));
  if (domainOf.size() != static_cast<size_t>(nranks))
    throw InvalidArgument(concat("topology: domainOf has ", domainOf.size(), " entries for ", nranks, " ranks"));
  std::vector<bool> used(static_cast<size_t>(nranks), false);
  for (int r = 0; r < nranks; ++r) {
    if (domainOf[r] < 0 || domainOf[r] >= nranks)
      throw InvalidArgument(concat("topology: rank ", r, " has domain index ", domainOf[r]));
    used[domainOf[r]] = true;
  }
  for (int d = 0; d < numDomains(); ++d)
    if (!used[d]) throw InvalidArgument(concat("topology: domain index ", d, " has no rank (indices must be dense)"));
}

}  // namespace hetccl::algo
