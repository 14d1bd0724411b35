// The size variables of the configuration registry have sane ranges (issue 12 item 10): an absurd value
// (HETCCL_CHUNK_BYTES=1 made a 4 MiB call take 32 s and 575 MB) is refused with the variable, the value
// and the range, whatever range the reading code asks for.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "algo/tuning.hpp"
#include "core/config.hpp"
#include "core/error.hpp"

namespace hetccl {
namespace {

struct Case {
  const char* name;
  const char* tooSmall;  // nullptr: no lower bound beyond 0 to test
  const char* smallest;
  const char* largest;
  const char* tooLarge;
};

constexpr Case kCases[] = {
    {"HETCCL_CHUNK_BYTES", "4095", "4K", "1G", "1073741825"},
    {"HETCCL_SMALL_BYTES", nullptr, "0", "1G", "2G"},
    {"HETCCL_SHM_SLOT_BYTES", "64", "4K", "256M", "257M"},
    {"HETCCL_SHM_SLOTS", "1", "2", "1024", "1025"},
    {"HETCCL_GPU_CHUNK_BYTES", "65535", "64K", "1G", "2G"},
    {"HETCCL_GPU_MIN_CHUNK_BYTES", "1", "4K", "1G", "2G"},
    {"HETCCL_HIER_NET_MIN_CHUNK_BYTES", "65535", "64K", "16G", "17G"},
    {"HETCCL_GPU_SLOTS", "1", "2", "1024", "1025"},
    {"HETCCL_GPU_PAIR_EXCHANGE_BYTES", nullptr, "0", "64G", "65G"},
};

std::string rejection(const char* name, const char* value) {
  setenv(name, value, 1);
  std::string what;
  try {
    // The widest range a caller could ask for: the registry's bounds must apply anyway.
    (void)Config::fromEnvironment().integer(name);
  } catch (const InvalidArgument& e) {
    what = e.what();
  }
  unsetenv(name);
  return what;
}

TEST(ConfigBounds, AbsurdSizesAreRefusedNamingVariableValueAndRange) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    if (c.tooSmall) {
      std::string what = rejection(c.name, c.tooSmall);
      EXPECT_NE(what.find(std::string(c.name) + "="), std::string::npos) << what;
      EXPECT_NE(what.find("is outside ["), std::string::npos) << what;
    }
    EXPECT_NE(rejection(c.name, c.tooLarge).find("is outside ["), std::string::npos);
    EXPECT_EQ(rejection(c.name, c.smallest), "");
    EXPECT_EQ(rejection(c.name, c.largest), "");
  }
}

TEST(ConfigBounds, ChunkOfOneByteFailsTheTuning) {
  setenv("HETCCL_CHUNK_BYTES", "1", 1);
  reloadConfig();
  try {
    (void)algo::Tuning::fromConfig();
    ADD_FAILURE() << "HETCCL_CHUNK_BYTES=1 was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("HETCCL_CHUNK_BYTES=1 is outside [4096, 1073741824]"), std::string::npos)
        << e.what();
  }
  unsetenv("HETCCL_CHUNK_BYTES");
  reloadConfig();
}

}  // namespace
}  // namespace hetccl
