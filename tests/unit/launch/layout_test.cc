// hetccl-run's rank -> domain and rank -> host arithmetic.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hetccl-run/domain_layout.hpp"

namespace hetccl::run {
namespace {

using V = std::vector<int>;

TEST(DomainLayout, RoundRobinCyclesThroughDomains) {
  EXPECT_EQ(assignDomains(5, 2, DomainLayout{}), (V{0, 1, 0, 1, 0}));
  EXPECT_EQ(assignDomains(3, 3, DomainLayout{}), (V{0, 1, 2}));
  EXPECT_EQ(assignDomains(4, 1, DomainLayout{}), (V{0, 0, 0, 0}));
}

TEST(DomainLayout, BlocksAreContiguousWithLargerBlocksFirst) {
  DomainLayout blocks{LayoutKind::Blocks, {}};
  EXPECT_EQ(assignDomains(4, 2, blocks), (V{0, 0, 1, 1}));
  EXPECT_EQ(assignDomains(5, 2, blocks), (V{0, 0, 0, 1, 1}));
  EXPECT_EQ(assignDomains(7, 3, blocks), (V{0, 0, 0, 1, 1, 2, 2}));
}

TEST(DomainLayout, UnevenSizesFollowTheList) {
  EXPECT_EQ(assignDomains(4, 2, DomainLayout::parse("3,1")), (V{0, 0, 0, 1}));
  EXPECT_EQ(assignDomains(5, 3, DomainLayout::parse("2,1,2")), (V{0, 0, 1, 2, 2}));
}

TEST(DomainLayout, ParseNamesAndLists) {
  EXPECT_EQ(DomainLayout::parse("round-robin").kind, LayoutKind::RoundRobin);
  EXPECT_EQ(DomainLayout::parse("blocks").kind, LayoutKind::Blocks);
  DomainLayout sizes = DomainLayout::parse("2,1,2");
  EXPECT_EQ(sizes.kind, LayoutKind::Sizes);
  EXPECT_EQ(sizes.sizes, (V{2, 1, 2}));
}

TEST(DomainLayout, ParseRejectsGarbage) {
  for (const char* bad : {"", "roundrobin", "3,", ",3", "3,,1", "0,2", "-1,2", "3;1", "1.5", "x"})
    EXPECT_THROW(DomainLayout::parse(bad), InvalidArgument) << bad;
}

TEST(DomainLayout, RejectsLayoutsThatDoNotFit) {
  EXPECT_THROW(assignDomains(2, 3, DomainLayout{}), InvalidArgument);  // a domain without ranks
  EXPECT_THROW(assignDomains(0, 1, DomainLayout{}), InvalidArgument);
  EXPECT_THROW(assignDomains(4, 0, DomainLayout{}), InvalidArgument);
  EXPECT_THROW(assignDomains(4, 2, DomainLayout::parse("3,2")), InvalidArgument);    // sums to 5
  EXPECT_THROW(assignDomains(4, 3, DomainLayout::parse("3,1")), InvalidArgument);    // 2 sizes, 3 domains
}

TEST(DomainLayout, ErrorMessageSaysWhatIsWrong) {
  try {
    assignDomains(4, 2, DomainLayout::parse("3,2"));
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sum to 5"), std::string::npos) << e.what();
  }
}

TEST(HostLayout, RoundRobinOverHosts) {
  EXPECT_EQ(assignHosts(5, 2), (V{0, 1, 0, 1, 0}));
  EXPECT_EQ(assignHosts(3, 3), (V{0, 1, 2}));
  EXPECT_THROW(assignHosts(2, 3), InvalidArgument);
  EXPECT_THROW(assignHosts(2, 0), InvalidArgument);
}

}  // namespace
}  // namespace hetccl::run
