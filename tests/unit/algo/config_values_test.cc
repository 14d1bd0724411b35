// Configuration misuse is never silent (issue 28, "no silent misuse"): HETCCL_DEBUG=info (lower case, as
// NCCL users type it) logs at INFO; a variable with a fixed set of values refuses anything else at init
// with the variable and the accepted values, whether or not the rank's path reads it (HETCCL_GPU_EXEC=fast
// on a CPU rank, HETCCL_TCP_SOCKETS=100 on one host were accepted); a misspelled HETCCL_* name is
// reported with the nearest real one. Cost: in-process, < 10 ms.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl {
namespace {

/// checkValues()' error with `name`=`value` set ("" when accepted).
std::string rejection(const char* name, const char* value) {
  setenv(name, value, 1);
  std::string what;
  try {
    Config::fromEnvironment().checkValues();
  } catch (const InvalidArgument& e) {
    what = e.what();
  }
  unsetenv(name);
  return what;
}

TEST(ConfigValues, LogLevelsAreCaseInsensitive) {
  for (const char* v : {"info", "Info", "INFO"}) {
    SCOPED_TRACE(v);
    setenv("HETCCL_DEBUG", v, 1);
    reloadConfig();
    log::reload();
    EXPECT_TRUE(log::enabled(log::Level::Info, log::kInit));
    EXPECT_FALSE(log::enabled(log::Level::Trace, log::kInit));
    EXPECT_EQ(rejection("HETCCL_DEBUG", v), "");
  }
  setenv("HETCCL_DEBUG", "trace", 1);
  setenv("HETCCL_DEBUG_SUBSYS", "init,net", 1);
  reloadConfig();
  log::reload();
  EXPECT_TRUE(log::enabled(log::Level::Trace, log::kNet));
  EXPECT_FALSE(log::enabled(log::Level::Trace, log::kColl));
  unsetenv("HETCCL_DEBUG");
  unsetenv("HETCCL_DEBUG_SUBSYS");
  reloadConfig();
  log::reload();
  EXPECT_FALSE(log::enabled(log::Level::Info, log::kInit));
}

TEST(ConfigValues, BadValuesNameTheVariableAndTheAcceptedValues) {
  struct Case {
    const char* name;
    const char* value;
    const char* expect;
  };
  constexpr Case kCases[] = {
      {"HETCCL_GPU_EXEC", "fast", "HETCCL_GPU_EXEC='fast' is not one of auto, pipeline, staged"},
      {"HETCCL_TCP_SOCKETS", "100", "HETCCL_TCP_SOCKETS=100 is outside [1, 16]"},
      {"HETCCL_DEBUG", "verbose", "HETCCL_DEBUG='verbose' is not one of NONE, VERSION, WARN, INFO, TRACE"},
      {"HETCCL_TRANSPORT", "infiniband", "HETCCL_TRANSPORT='infiniband' is not one of auto, shm, tcp, ucx"},
      {"HETCCL_UCX", "yes", "HETCCL_UCX='yes' is not one of auto, on, off"},
      {"HETCCL_ALGO", "Ring", "HETCCL_ALGO='Ring' is not one of auto, ring, tree, rd, hier"},
      {"HETCCL_DEVICE", "gpu", "HETCCL_DEVICE='gpu' is not one of auto, host, cuda, hip"},
      {"HETCCL_VENDOR_CCL", "mccl", "HETCCL_VENDOR_CCL='mccl' is not one of auto, off, nccl, rccl"},
      {"HETCCL_RMA_WINDOW", "always", "HETCCL_RMA_WINDOW='always' is not one of auto, on, off"},
      {"HETCCL_RMA_IPC", "on", "HETCCL_RMA_IPC='on' is not one of auto, off"},
      {"HETCCL_IDLE_SPIN", "2000", "HETCCL_IDLE_SPIN='2000' is not one of auto, short, long"},
      {"HETCCL_CHECKSUM", "crc", "HETCCL_CHECKSUM='crc' is not a boolean"},
      {"HETCCL_CHECK_CALLS", "2", "HETCCL_CHECK_CALLS='2' is not a boolean"},
      {"HETCCL_TIMEOUT", "-1", "HETCCL_TIMEOUT='-1' is not a positive number of seconds"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    std::string what = rejection(c.name, c.value);
    EXPECT_NE(what.find(c.expect), std::string::npos) << what;
  }
  for (const Case& ok : {Case{"HETCCL_GPU_EXEC", "staged", ""}, Case{"HETCCL_TCP_SOCKETS", "16", ""},
                         Case{"HETCCL_DEBUG", "warn", ""}, Case{"HETCCL_UCX", "off", ""}, Case{"HETCCL_CHECKSUM", "1", ""},
                         Case{"HETCCL_IDLE_SPIN", "long", ""}}) {
    SCOPED_TRACE(ok.name);
    EXPECT_EQ(rejection(ok.name, ok.value), "");
  }
}

TEST(ConfigValues, MisspelledVariablesAreNamedWithTheNearestOne) {
  setenv("HETCCL_TIMEOUTT", "5", 1);
  setenv("HETCCL_GPUEXEC", "staged", 1);
  setenv("HETCCL_ZZZ_NOTHING_LIKE_IT", "1", 1);
  setenv("HETCCL_LIBRARY", "/x/libhetccl.so", 1);  // the Python package's: not unknown
  setenv("HETCCL_TEST_ANYTHING", "1", 1);          // the tests'
  std::vector<std::string> u;
  for (const std::string& x : Config::unknownVariables())  // only ours: the caller's environment may hold others
    for (const char* mine : {"HETCCL_TIMEOUTT ", "HETCCL_GPUEXEC ", "HETCCL_ZZZ_NOTHING_LIKE_IT", "HETCCL_LIBRARY",
                             "HETCCL_TEST_"})
      if (x.starts_with(mine)) u.push_back(x);
  for (const char* n : {"HETCCL_TIMEOUTT", "HETCCL_GPUEXEC", "HETCCL_ZZZ_NOTHING_LIKE_IT", "HETCCL_LIBRARY",
                        "HETCCL_TEST_ANYTHING"})
    unsetenv(n);
  const std::vector<std::string> expect{"HETCCL_GPUEXEC (did you mean HETCCL_GPU_EXEC?)",
                                        "HETCCL_TIMEOUTT (did you mean HETCCL_TIMEOUT?)", "HETCCL_ZZZ_NOTHING_LIKE_IT"};
  EXPECT_EQ(u, expect);
}

}  // namespace
}  // namespace hetccl
