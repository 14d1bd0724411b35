#include "hetccl-run/launch_plan.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "hetccl-run/preload.hpp"

namespace hetccl::run {

LaunchPlan makeLaunchPlan(const RunOptions& options, std::string uniqueIdHex) {
  LaunchPlan plan;
  plan.nranks = options.nranks;
  plan.uniqueIdHex = std::move(uniqueIdHex);
  if (options.domains > 0) plan.domainOfRank = assignDomains(options.nranks, options.domains, options.layout);
  if (options.hostIds > 0) plan.hostOfRank = assignHosts(options.nranks, options.hostIds);
  if (!options.preload.empty()) {
    const char* inherited = std::getenv("LD_PRELOAD");  // the loader's variable, not a hetccl setting
    plan.ldPreload = preloadValue(resolvePreload(options.preload), inherited ? inherited : "");
  }
  return plan;
}

std::vector<EnvAssignment> rankVariables(const LaunchPlan& plan, int rank) {
  if (rank < 0 || rank >= plan.nranks)
    throw InternalError(concat("rankVariables: rank ", rank, " outside [0, ", plan.nranks, ")"));
  std::vector<EnvAssignment> vars = {
      {"HETCCL_UNIQUE_ID", plan.uniqueIdHex},
      {"HETCCL_RANK", std::to_string(rank)},
      {"HETCCL_NRANKS", std::to_string(plan.nranks)},
      {"HETCCL_LOCAL_RANK", std::to_string(rank)},
      {"HETCCL_LOCAL_SIZE", std::to_string(plan.nranks)},
  };
  if (!plan.domainOfRank.empty()) vars.emplace_back("HETCCL_DOMAIN", concat("d", plan.domainOfRank[rank]));
  if (!plan.hostOfRank.empty()) vars.emplace_back("HETCCL_HOST_ID", concat("h", plan.hostOfRank[rank]));
  if (!plan.ldPreload.empty()) vars.emplace_back("LD_PRELOAD", plan.ldPreload);
  return vars;
}

}  // namespace hetccl::run
