// Who is where: this rank, the number of ranks, and each rank's domain (dense indices 0..D-1).
// Domains may differ in size (3+1, 2+1+2) and ranks of one domain need not be numbered contiguously.
#pragma once

#include <vector>

namespace hetccl::algo {

struct Topology {
  int rank = 0;
  int nranks = 1;
  std::vector<int> domainOf;  ///< domainOf[r] for every rank r, values 0..numDomains()-1 (all used)
  /// Every domain has a vendor communicator over membersOf(d) (domain rank = position there): the
  /// planner runs intra-domain phases as DomainCollective steps (only the GPU stream executor sets it).
  bool domainCollectives = false;

  /// A topology where every rank is in domain 0.
  static Topology singleDomain(int rank, int nranks);

  /// Number of domains D (max domainOf + 1).
  int numDomains() const;
  /// Ranks of domain `d` in increasing rank order.
  std::vector<int> membersOf(int d) const;
  /// Every rank ordered by (domain, rank): a ring through this list crosses domains only D times.
  std::vector<int> domainOrder() const;
  /// Throws InvalidArgument when rank/nranks/domainOf are inconsistent or domain indices are not dense.
  void validate() const;
};

}  // namespace hetccl::algo
