// The variables hetccl-run gives each rank, and how it words exit statuses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <map>

#include "hetccl-run/exit_status.hpp"
#include "hetccl-run/launch_plan.hpp"

namespace hetccl::run {
namespace {

std::map<std::string, std::string> asMap(const std::vector<EnvAssignment>& vars) {
  return {vars.begin(), vars.end()};
}

TEST(LaunchPlan, EveryRankGetsItsNumbersAndTheSharedId) {
  RunOptions o = parseRunOptions({"-n", "4", "--layout", "3,1", "--host-ids", "2", "prog"});
  LaunchPlan plan = makeLaunchPlan(o, "abcd");
  for (int r = 0; r < 4; ++r) {
    auto vars = asMap(rankVariables(plan, r));
    EXPECT_EQ(vars["HETCCL_UNIQUE_ID"], "abcd");
    EXPECT_EQ(vars["HETCCL_RANK"], std::to_string(r));
    EXPECT_EQ(vars["HETCCL_NRANKS"], "4");
    EXPECT_EQ(vars["HETCCL_LOCAL_RANK"], std::to_string(r));
    EXPECT_EQ(vars["HETCCL_LOCAL_SIZE"], "4");
    EXPECT_EQ(vars["HETCCL_DOMAIN"], r < 3 ? "d0" : "d1");
    EXPECT_EQ(vars["HETCCL_HOST_ID"], r % 2 == 0 ? "h0" : "h1");
  }
}

TEST(LaunchPlan, NoDomainOrHostVariablesWhenNotAsked) {
  LaunchPlan plan = makeLaunchPlan(parseRunOptions({"-n", "2", "prog"}), "abcd");
  auto vars = asMap(rankVariables(plan, 1));
  EXPECT_EQ(vars.count("HETCCL_DOMAIN"), 0u);
  EXPECT_EQ(vars.count("HETCCL_HOST_ID"), 0u);
  EXPECT_EQ(vars.size(), 5u);
}

/// A real wait status from a child that ran `body`.
template <typename Body>
int waitStatusOf(Body body) {
  pid_t pid = fork();
  if (pid == 0) body();
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(ExitStatus, WordsAndShellCodes) {
  int clean = waitStatusOf([] { _exit(0); });
  int three = waitStatusOf([] { _exit(3); });
  int killed = waitStatusOf([] {
    signal(SIGKILL, SIG_DFL);
    raise(SIGKILL);
    _exit(0);
  });
  EXPECT_TRUE(exitedCleanly(clean));
  EXPECT_FALSE(exitedCleanly(three));
  EXPECT_FALSE(exitedCleanly(killed));
  EXPECT_EQ(describeWaitStatus(three), "exited with status 3");
  EXPECT_EQ(describeWaitStatus(killed).rfind("killed by signal 9", 0), 0u) << describeWaitStatus(killed);
  EXPECT_EQ(shellExitCode(clean), 0);
  EXPECT_EQ(shellExitCode(three), 3);
  EXPECT_EQ(shellExitCode(killed), 137);
}

}  // namespace
}  // namespace hetccl::run
