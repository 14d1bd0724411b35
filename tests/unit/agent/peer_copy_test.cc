// The source section of a device copy by the target (src/agent/peer_copy.hpp): what the initiator encodes
// decodes to the same allocations and places, and every malformed section -- each truncation, each
// extension, no allocation, more allocations than ranges, an index past them, a reserved field set -- is
// refused with a reason before anything is mapped. < 0.1 s.
#include <gtest/gtest.h>

#include "agent/peer_copy.hpp"
#include "core/error.hpp"

namespace hetccl::agent {
namespace {

PeerSource sample() {
  PeerSource s;
  for (unsigned char v : {3, 9}) {
    SourceAlloc a;
    a.handle.fill(v);
    a.allocBytes = 1000u * v;
    s.allocs.push_back(a);
  }
  s.places = {{0, 0}, {1, 4096}, {0, 77}};
  return s;
}

std::string refusal(const std::vector<unsigned char>& bytes, uint64_t places) {
  try {
    decodeSource(bytes, places);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(AgentPeerCopySource, RoundTrips) {
  const PeerSource s = sample();
  const PeerSource d = decodeSource(encodeSource(s), s.places.size());
  ASSERT_EQ(d.allocs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d.allocs[i].handle, s.allocs[i].handle);
    EXPECT_EQ(d.allocs[i].allocBytes, s.allocs[i].allocBytes);
  }
  ASSERT_EQ(d.places.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.places[i].alloc, s.places[i].alloc);
    EXPECT_EQ(d.places[i].offset, s.places[i].offset);
  }
}

TEST(AgentPeerCopySource, AnUnmapCarriesOneAllocationAndNoPlace) {
  PeerSource s = sample();
  s.allocs.resize(1);
  s.places.clear();
  EXPECT_EQ(decodeSource(encodeSource(s), 0).allocs.size(), 1u);
  s.allocs = sample().allocs;  // two allocations and no range: refused
  EXPECT_NE(refusal(encodeSource(s), 0), "");
}

TEST(AgentPeerCopySource, EveryTruncationAndExtensionIsRefused) {
  const std::vector<unsigned char> b = encodeSource(sample());
  for (size_t n = 0; n < b.size(); ++n)
    EXPECT_NE(refusal(std::vector<unsigned char>(b.begin(), b.begin() + static_cast<long>(n)), 3), "") << n << " bytes";
  std::vector<unsigned char> longer = b;
  longer.push_back(0);
  EXPECT_NE(refusal(longer, 3), "");
  EXPECT_NE(refusal(b, 2), "") << "fewer ranges than places";
  EXPECT_NE(refusal(b, 4), "") << "more ranges than places";
}

TEST(AgentPeerCopySource, BadCountsIndicesAndReservedFieldsAreNamed) {
  PeerSource none = sample();
  none.allocs.clear();
  EXPECT_NE(refusal(encodeSource(none), 3).find("0 allocations"), std::string::npos);
  PeerSource many = sample();
  many.places.resize(1);
  EXPECT_NE(refusal(encodeSource(many), 1).find("2 allocations for 1 ranges"), std::string::npos);
  PeerSource past = sample();
  past.places[2].alloc = 2;
  EXPECT_NE(refusal(encodeSource(past), 3).find("range 2 names allocation 2 of 2"), std::string::npos);
  std::vector<unsigned char> b = encodeSource(sample());
  b[4] = 1;  // the header's reserved word
  EXPECT_NE(refusal(b, 3).find("reserved"), std::string::npos);
  b = encodeSource(sample());
  b[8 + 2 * (HETCCL_GPU_IPC_HANDLE_BYTES + 8) + 16 + 4] = 1;  // range 1's reserved word
  EXPECT_NE(refusal(b, 3).find("range 1: reserved"), std::string::npos);
}

}  // namespace
}  // namespace hetccl::agent
