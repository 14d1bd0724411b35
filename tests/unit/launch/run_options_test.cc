// hetccl-run's command line.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hetccl-run/run_options.hpp"

namespace hetccl::run {
namespace {

using Args = std::vector<std::string>;

std::string errorOf(const Args& args) {
  try {
    parseRunOptions(args);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RunOptions, Defaults) {
  RunOptions o = parseRunOptions({"-n", "4", "prog", "-x", "--y"});
  EXPECT_EQ(o.nranks, 4);
  EXPECT_EQ(o.domains, 0);
  EXPECT_EQ(o.hostIds, 0);
  EXPECT_FALSE(o.prefixOutput);
  EXPECT_DOUBLE_EQ(o.graceSeconds, 30);
  EXPECT_DOUBLE_EQ(o.timeoutSeconds, 0);
  EXPECT_EQ(o.command, (Args{"prog", "-x", "--y"}));  // options after the command belong to it
}

TEST(RunOptions, EveryOptionAndValueForm) {
  RunOptions o = parseRunOptions({"-n6", "--domains=3", "--layout", "blocks", "--host-ids", "2", "-p", "--grace",
                                  "1.5", "--timeout=20", "--", "-prog", "a"});
  EXPECT_EQ(o.nranks, 6);
  EXPECT_EQ(o.domains, 3);
  EXPECT_EQ(o.layout.kind, LayoutKind::Blocks);
  EXPECT_EQ(o.hostIds, 2);
  EXPECT_TRUE(o.prefixOutput);
  EXPECT_DOUBLE_EQ(o.graceSeconds, 1.5);
  EXPECT_DOUBLE_EQ(o.timeoutSeconds, 20);
  EXPECT_EQ(o.command, (Args{"-prog", "a"}));
}

TEST(RunOptions, SizesLayoutSetsTheDomainCount) {
  RunOptions o = parseRunOptions({"-n", "5", "--layout", "2,1,2", "prog"});
  EXPECT_EQ(o.domains, 3);
  EXPECT_EQ(o.layout.sizes, (std::vector<int>{2, 1, 2}));
  EXPECT_EQ(parseRunOptions({"-n", "4", "--domains", "2", "--layout", "3,1", "prog"}).domains, 2);
}

TEST(RunOptions, ZeroLeavesDomainAndHostAlone) {
  RunOptions o = parseRunOptions({"-n", "2", "--domains", "0", "--host-ids", "0", "prog"});
  EXPECT_EQ(o.domains, 0);
  EXPECT_EQ(o.hostIds, 0);
}

TEST(RunOptions, HelpNeedsNothingElse) { EXPECT_TRUE(parseRunOptions({"--help"}).help); }

TEST(RunOptions, ErrorsNameTheProblem) {
  EXPECT_NE(errorOf({"prog"}).find("missing -n"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2"}).find("missing the command"), std::string::npos);
  EXPECT_NE(errorOf({"-n"}).find("-n needs a value"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "two", "prog"}).find("'two'"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "0", "prog"}).find("outside"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2x", "prog"}).find("not a decimal integer"), std::string::npos);
  EXPECT_NE(errorOf({"--frob", "-n", "2", "prog"}).find("unknown option '--frob'"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2", "--timeout", "soon", "prog"}).find("--timeout"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2", "--grace", "-1", "prog"}).find("--grace"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2", "--prefix=yes", "prog"}).find("takes no value"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2", "--domains", "3", "prog"}).find("without ranks"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "2", "--host-ids", "3", "prog"}).find("without ranks"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "4", "--domains", "3", "--layout", "3,1", "prog"}).find("--domains is 3"),
            std::string::npos);
  EXPECT_NE(errorOf({"-n", "4", "--layout", "blocks", "prog"}).find("needs --domains"), std::string::npos);
  EXPECT_NE(errorOf({"-n", "4", "--layout", "2,1", "prog"}).find("sum to 3"), std::string::npos);
}

}  // namespace
}  // namespace hetccl::run
