// Variables that must agree are compared when a communicator is created: threads as ranks over the real
// bootstrap, each rank with its own configuration snapshot.
#include "comm/config_agreement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bootstrap_harness.hpp"
#include "core/error.hpp"

namespace hetccl {
namespace {

using bootstrap::testing::ScopedEnv;

/// The configuration of the environment with `name` set to `value` (nullptr: unset).
Config configWith(const char* name, const char* value) {
  ScopedEnv env(name, value);
  return Config::fromEnvironment();
}

/// Runs the check on every rank, rank r with configs[r] (and derived[r] when given); returns each rank's
/// error text ("" when none).
std::vector<std::string> check(const std::vector<Config>& configs, const std::vector<std::string>& derived = {}) {
  const int n = static_cast<int>(configs.size());
  auto ranks = bootstrap::testing::joinAll(bootstrap::createUniqueId(), n);
  std::vector<std::string> errors(n);
  bootstrap::testing::onEveryRank(ranks, [&](int r, bootstrap::Bootstrap& boot) {
    try {
      if (derived.empty()) {
        checkConfigAgrees(boot, configs[r]);
      } else {
        const DerivedValue v{"HETCCL_TUNING_FILE (rows for this layout)", derived[r], ""};
        checkConfigAgrees(boot, configs[r], {&v, 1});
      }
    } catch (const InvalidUsage& e) {
      errors[r] = e.what();
    }
  });
  return errors;
}

TEST(ConfigAgreementTest, AGpuChunkSizeMismatchIsAnErrorOnEveryRankNamingBothValues) {
  const Config big = configWith("HETCCL_GPU_CHUNK_BYTES", "4M"), small = configWith("HETCCL_GPU_CHUNK_BYTES", "1M");
  auto errors = check({big, big, small});
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(errors[r].find("HETCCL_GPU_CHUNK_BYTES differs between ranks: rank 0 has '4194304', rank 2 has "
                             "'1048576'"),
              std::string::npos)
        << "rank " << r << ": " << errors[r];
  }
}

TEST(ConfigAgreementTest, EveryVariableThatShapesTheWireIsCompared) {
  const std::vector<std::pair<const char*, const char*>> other = {
      {"HETCCL_GPU_EXEC", "staged"},         {"HETCCL_GPU_CHUNK_BYTES", "1M"}, {"HETCCL_GPU_MIN_CHUNK_BYTES", "64K"},
      {"HETCCL_GPU_PAIR_EXCHANGE_BYTES", "0"}, {"HETCCL_GPU_SLOTS", "4"},       {"HETCCL_ALGO", "ring"},
      {"HETCCL_SMALL_BYTES", "1K"},          {"HETCCL_CHUNK_BYTES", "128K"},   {"HETCCL_VENDOR_CCL", "off"},
      {"HETCCL_CHECK_CALLS", "1"},           {"HETCCL_CHECKSUM", "on"},        {"HETCCL_HIER_CHUNK_BYTES", "1M"},
      {"HETCCL_STAGED_PIECE_BYTES", "64K"},   {"HETCCL_HIER_NET_MIN_CHUNK_BYTES", "1M"}, {"HETCCL_GPU_LL_BYTES", "0"}};
  ASSERT_EQ(other.size(), variablesThatMustAgree().size());
  const Config defaults = configWith("HETCCL_GPU_SLOTS", nullptr);
  for (const auto& [name, value] : other) {
    auto errors = check({defaults, configWith(name, value)});
    EXPECT_NE(errors[0].find(concat(name, " differs between ranks")), std::string::npos) << name << ": " << errors[0];
    EXPECT_EQ(errors[0], errors[1]);
  }
}

TEST(ConfigAgreementTest, EqualValuesWrittenDifferentlyAgree) {
  EXPECT_EQ(check({configWith("HETCCL_GPU_CHUNK_BYTES", "4M"), configWith("HETCCL_GPU_CHUNK_BYTES", "4194304")}),
            (std::vector<std::string>{"", ""}));
  EXPECT_EQ(check({configWith("HETCCL_CHECKSUM", "on"), configWith("HETCCL_CHECKSUM", "1")}),
            (std::vector<std::string>{"", ""}));
  EXPECT_EQ(check({configWith("HETCCL_TIMEOUT", "10"), configWith("HETCCL_TIMEOUT", "20")}),  // not compared
            (std::vector<std::string>{"", ""}));
}

// Values derived from the configuration (the tuning file's rows for the layout) are compared too, named as
// the caller names them; long ones by their first 27 characters and a hash of the whole, so two that
// differ only at the end still differ.
TEST(ConfigAgreementTest, DerivedValuesMustAgreeToo) {
  const Config c = configWith("HETCCL_GPU_SLOTS", nullptr);
  EXPECT_EQ(check({c, c}, {"rd<=65536 ring", "rd<=65536 ring"}), (std::vector<std::string>{"", ""}));
  auto errors = check({c, c, c}, {"rd<=65536 ring", "rd<=65536 ring", "none"});
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(errors[r].find("HETCCL_TUNING_FILE (rows for this layout) differs between ranks: rank 0 has "
                             "'rd<=65536 ring', rank 2 has 'none'"),
              std::string::npos)
        << "rank " << r << ": " << errors[r];
  const std::string longA = "rd<=65536 tree<=1048576 hier<=2097152 ring<=4194304 rd<=8388608 ring";
  std::string longB = longA;
  longB.replace(longB.size() - 4, 4, "tree");
  errors = check({c, c}, {longA, longB});
  EXPECT_NE(errors[0].find("differs between ranks: rank 0 has 'rd<=65536 tree<=1048576 hie...#"), std::string::npos)
      << errors[0];
  EXPECT_EQ(check({c, c}, {longA, longA}), (std::vector<std::string>{"", ""}));
}

}  // namespace
}  // namespace hetccl
