#include "hetccl-run/domain_layout.hpp"

#include <numeric>

#include "common/env_reader.hpp"
#include "core/error.hpp"

namespace hetccl::run {

DomainLayout DomainLayout::parse(std::string_view text) {
  if (text == "round-robin") return {LayoutKind::RoundRobin, {}};
  if (text == "blocks") return {LayoutKind::Blocks, {}};
  if (text.empty() || text.find_first_not_of("0123456789,") != std::string_view::npos)
    throw InvalidArgument(concat("--layout '", text,
                                 "' is not round-robin, blocks, or a comma list of domain sizes like 3,1"));
  DomainLayout layout{LayoutKind::Sizes, {}};
  while (true) {
    size_t comma = text.find(',');
    layout.sizes.push_back(
        static_cast<int>(tools::parseDecimal("a --layout domain size", text.substr(0, comma), 1, 1 << 20)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return layout;
}

std::vector<int> assignDomains(int nranks, int domains, const DomainLayout& layout) {
  if (nranks < 1) throw InvalidArgument(concat("the job needs at least one rank, not ", nranks));
  if (domains < 1) throw InvalidArgument(concat("the number of domains must be at least 1, not ", domains));
  if (domains > nranks)
    throw InvalidArgument(concat(domains, " domains for ", nranks, " ranks would leave a domain without ranks"));
  std::vector<int> domainOf(nranks);
  switch (layout.kind) {
    case LayoutKind::RoundRobin:
      for (int r = 0; r < nranks; ++r) domainOf[r] = r % domains;
      break;
    case LayoutKind::Blocks: {
      int rank = 0;
      for (int d = 0; d < domains; ++d) {
        int blockSize = nranks / domains + (d < nranks % domains ? 1 : 0);
        for (int i = 0; i < blockSize; ++i) domainOf[rank++] = d;
      }
      break;
    }
    case LayoutKind::Sizes: {
      if (static_cast<int>(layout.sizes.size()) != domains)
        throw InvalidArgument(concat("--layout lists ", layout.sizes.size(), " domain sizes but --domains is ",
                                     domains));
      long long sum = std::accumulate(layout.sizes.begin(), layout.sizes.end(), 0LL);
      if (sum != nranks)
        throw InvalidArgument(concat("--layout domain sizes sum to ", sum, " but -n is ", nranks));
      int rank = 0;
      for (int d = 0; d < domains; ++d)
        for (int i = 0; i < layout.sizes[d]; ++i) domainOf[rank++] = d;
      break;
    }
  }
  return domainOf;
}

std::vector<int> assignHosts(int nranks, int hosts) {
  if (hosts < 1) throw InvalidArgument(concat("the number of host ids must be at least 1, not ", hosts));
  if (hosts > nranks)
    throw InvalidArgument(concat("--host-ids ", hosts, " for ", nranks, " ranks would leave a host without ranks"));
  std::vector<int> hostOf(nranks);
  for (int r = 0; r < nranks; ++r) hostOf[r] = r % hosts;
  return hostOf;
}

}  // namespace hetccl::run
