// What every rank of a local job gets: the variables hetccl-run puts into its environment.
// Pure: computed from the options and the job's unique id, no I/O.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hetccl-run/run_options.hpp"

namespace hetccl::run {

/// One environment assignment NAME=VALUE.
using EnvAssignment = std::pair<std::string, std::string>;

struct LaunchPlan {
  int nranks = 0;
  std::string uniqueIdHex;        ///< HETCCL_UNIQUE_ID of every rank
  std::vector<int> domainOfRank;  ///< empty: HETCCL_DOMAIN is left as it is
  std::vector<int> hostOfRank;    ///< empty: HETCCL_HOST_ID is left as it is
  std::string ldPreload;          ///< LD_PRELOAD of every rank (--preload); empty: left as it is
};

/// Lays out the job. Throws InvalidArgument when the domain layout or host count does not fit, or the
/// --preload library is missing.
LaunchPlan makeLaunchPlan(const RunOptions& options, std::string uniqueIdHex);

/// The variables of `rank`: HETCCL_UNIQUE_ID, HETCCL_RANK, HETCCL_NRANKS, HETCCL_LOCAL_RANK,
/// HETCCL_LOCAL_SIZE (all ranks run on this host, so local rank = rank), then HETCCL_DOMAIN=d<i> and
/// HETCCL_HOST_ID=h<j> and LD_PRELOAD when the plan sets them.
std::vector<EnvAssignment> rankVariables(const LaunchPlan& plan, int rank);

}  // namespace hetccl::run
