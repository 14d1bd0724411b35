// hetccl-run: starts N local processes as the ranks of one hetccl job (see run_options.hpp for the
// command line and supervisor.hpp for what happens when ranks fail).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bootstrap/unique_id.hpp"
#include "core/error.hpp"
#include "net/free_port.hpp"
#include "hetccl-run/launch_plan.hpp"
#include "hetccl-run/run_options.hpp"
#include "hetccl-run/supervisor.hpp"

namespace {

constexpr int kUsageError = 2;
constexpr int kLaunchError = 1;

}  // namespace

int main(int argc, char** argv) {
  using namespace hetccl::run;
  RunOptions options;
  try {
    options = parseRunOptions(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const hetccl::Error& e) {
    std::fprintf(stderr, "hetccl-run: %s\n(hetccl-run --help lists the options)\n", e.what());
    return kUsageError;
  }
  if (options.help) {
    std::fputs(usageText().c_str(), stdout);
    return 0;
  }
  try {
    auto id = hetccl::bootstrap::makeLauncherId(hetccl::net::freeLoopbackAddress());
    LaunchPlan plan = makeLaunchPlan(options, id.toHex());
    SupervisorSettings settings;
    settings.graceSeconds = options.graceSeconds;
    settings.timeoutSeconds = options.timeoutSeconds;
    settings.prefixOutput = options.prefixOutput;
    return superviseJob(options.command, plan, settings);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-run: %s\n", e.what());
    return kLaunchError;
  }
}
