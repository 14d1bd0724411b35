// Slurm's compressed node and task lists.
#include <gtest/gtest.h>

#include "common/slurm_lists.hpp"
#include "core/error.hpp"

namespace hetccl::tools {
namespace {

TEST(SlurmNodeList, FirstHost) {
  EXPECT_EQ(firstHostOfNodeList("L", "node7"), "node7");
  EXPECT_EQ(firstHostOfNodeList("L", "a,b,c"), "a");
  EXPECT_EQ(firstHostOfNodeList("L", "node[01-04,07],gpu5"), "node01");
  EXPECT_EQ(firstHostOfNodeList("L", "node[3,1-2]"), "node3");
  EXPECT_EQ(firstHostOfNodeList("L", "rack[1-2]-n[3-4].ib"), "rack1-n3.ib");
}

TEST(SlurmNodeList, RejectsMalformedLists) {
  for (const char* bad : {"", ",a", "node[01-02", "node]01[", "node[[1]]", "node[]", "node[-2]"})
    EXPECT_THROW(firstHostOfNodeList("SLURM_NODELIST", bad), InvalidArgument) << bad;
  try {
    firstHostOfNodeList("SLURM_NODELIST", "node[01-02");
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_NODELIST"), std::string::npos) << e.what();
  }
}

TEST(SlurmTasksPerNode, ExpandsRepeats) {
  EXPECT_EQ(tasksOnNode("T", "4", 0), 4);
  EXPECT_EQ(tasksOnNode("T", "2(x3),1", 0), 2);
  EXPECT_EQ(tasksOnNode("T", "2(x3),1", 2), 2);
  EXPECT_EQ(tasksOnNode("T", "2(x3),1", 3), 1);
  EXPECT_EQ(tasksOnNode("T", "1,3,2", 1), 3);
}

TEST(SlurmTasksPerNode, RejectsMalformedOrShortLists) {
  EXPECT_THROW(tasksOnNode("T", "2(x3),1", 4), InvalidArgument);  // only 4 nodes
  for (const char* bad : {"", "x", "2(3)", "2(x)", "2(x3", "0", "2,,1", "2(x0)"})
    EXPECT_THROW(tasksOnNode("T", bad, 0), InvalidArgument) << bad;
}

}  // namespace
}  // namespace hetccl::tools
