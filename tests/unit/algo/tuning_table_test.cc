// The tuning file's parser (algo/tuning_table.hpp): rows of a layout become bands in order; every
// malformed row is refused with the file, the line and what is wrong. Cost: milliseconds.
#include "algo/tuning_table.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace hetccl::algo {
namespace {

constexpr const char* kTable = R"(# written by hand
all_reduce 8 8 1 shm 65536 rd   # latency-bound
all_reduce 4 1 1 auto 64K tree
all_reduce 8 8 1 shm 1M tree

all_reduce 8 8 1 shm max ring
all_reduce 8 8 2 tcp 4G hier
)";

TEST(TuningTable, RowsOfALayoutBecomeItsBandsInOrder) {
  const std::vector<TuningRow> rows = parseTuningTable(kTable, "t.txt");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(bandsFor(rows, TuningLayout{8, 8, 1, "shm"}),
            (std::vector<TuningBand>{{65536, AlgoChoice::RecursiveDoubling},
                                     {size_t{1} << 20, AlgoChoice::Tree},
                                     {TuningBand::kAnySize, AlgoChoice::Ring}}));
  EXPECT_EQ(bandsFor(rows, TuningLayout{4, 1, 1, "auto"}), (std::vector<TuningBand>{{65536, AlgoChoice::Tree}}));
  EXPECT_EQ(bandsFor(rows, TuningLayout{8, 8, 2, "tcp"}), (std::vector<TuningBand>{{size_t{4} << 30, AlgoChoice::Hier}}));
  EXPECT_TRUE(bandsFor(rows, TuningLayout{8, 8, 1, "tcp"}).empty());  // transport differs
  EXPECT_TRUE(bandsFor(rows, TuningLayout{8, 4, 1, "shm"}).empty());  // domains differ
  EXPECT_EQ(describeBands(bandsFor(rows, TuningLayout{8, 8, 1, "shm"})), "rd<=65536 tree<=1048576 ring");
  EXPECT_EQ(describeBands({}), "none");
  EXPECT_TRUE(parseTuningTable("# nothing\n\n", "empty").empty());
}

TEST(TuningTable, MalformedRowsAreRefusedNamingTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"all_reduce 8 8 1 shm 64K", "line 2: 6 fields, not 7"},
      {"broadcast 8 8 1 shm 64K tree", "line 2: collective 'broadcast' cannot be tuned (only all_reduce)"},
      {"all_reduce 0 1 1 shm 64K tree", "line 2: ranks '0' is not a number from 1"},
      {"all_reduce 8 9 1 shm 64K tree", "line 2: domains '9' is not a number from 1 to 8"},
      {"all_reduce 8 8 x shm 64K tree", "line 2: hosts 'x' is not a number from 1 to 8"},
      {"all_reduce 8 8 1 nvlink 64K tree", "line 2: transport 'nvlink' is not one of auto, shm, tcp, ucx"},
      {"all_reduce 8 8 1 shm 64KiB tree", "line 2: size '64KiB' is not a byte count"},
      {"all_reduce 8 8 1 shm 0 tree", "line 2: size '0' is not a byte count"},
      {"all_reduce 8 8 1 shm 64K auto", "line 2: algorithm 'auto' is not one of ring, tree, rd, hier"},
      {"all_reduce 8 8 1 shm 64K fast", "line 2: algorithm 'fast' is not one of ring, tree, rd, hier"},
      {"all_reduce 8 1 1 shm 64K hier", "line 2: hier needs several domains"},
      {"all_reduce 8 8 2 tcp 32K rd", "line 2: size 32K is not above this layout's previous row (65536)"},
      {"all_reduce 8 8 2 tcp 64K rd", "line 2: size 64K is not above this layout's previous row (65536)"},
  };
  for (const auto& [row, expected] : cases) {
    const std::string text = std::string("all_reduce 8 8 2 tcp 64K ring\n") + row + "\n";
    try {
      parseTuningTable(text, "my.tuning");
      ADD_FAILURE() << "accepted: " << row;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("tuning file my.tuning, ") + expected), std::string::npos)
          << row << " -> " << e.what();
    }
  }
  try {
    parseTuningTable("all_reduce 2 2 1 shm max ring\nall_reduce 2 2 1 shm max rd\n", "f");
    ADD_FAILURE() << "a row after max accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: a row after this layout's max row"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hetccl::algo
