// A batch the target would reject as malformed is rejected at the initiator (issue 27, item 4): more
// than 4,194,304 ranges after merging (the wire protocol's table limit) is hetcclInvalidArgument at the
// call, naming the limit, and changes nothing -- the RMA channel to the peer still works at once (before,
// the call succeeded, the target dropped the channel and the request waited HETCCL_TIMEOUT).
// Cost: about 2 s per transport (4,194,305 ranges built and checked twice; ~400 MB while it runs).
#include <cstring>

#include "rma_fixture.hpp"

namespace hetccl::test {
namespace {

using RmaBatchLimit = RmaTest;

constexpr size_t kMaxRanges = size_t{1} << 22;

TEST_P(RmaBatchLimit, TooManyRangesAreRefusedAtTheCall) {
  start(2);
  // Ranges of one byte with gaps on both sides: none merges with another.
  std::vector<unsigned char> local(2 * (kMaxRanges + 1), 5), remote(2 * (kMaxRanges + 1), 0);
  hetcclMemDesc_t desc;
  hetcclMem_t ml = reg(0, local.data(), local.size());
  hetcclMem_t mr = reg(1, remote.data(), remote.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  std::vector<hetcclRmaRange_t> ranges(kMaxRanges + 1);
  for (size_t i = 0; i < ranges.size(); ++i) ranges[i] = {2 * i, 2 * i, 1};

  hetcclRequest_t req = nullptr;
  EXPECT_EQ(hetcclPutBatch(ml, r, ranges.data(), ranges.size(), &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("4194304"), std::string::npos) << lastError();
  EXPECT_EQ(req, nullptr);
  EXPECT_EQ(hetcclGetBatch(ml, r, ranges.data(), ranges.size(), &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("4194304"), std::string::npos) << lastError();
  EXPECT_EQ(req, nullptr);
  EXPECT_EQ(remote[0], 0);

  // Nothing changed: the channel answers at once, well within the deadline (a dead channel fails or
  // waits HETCCL_TIMEOUT).
  const auto t0 = std::chrono::steady_clock::now();
  RMA_OK(hetcclPut(ml, 0, r, 0, 1000, &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(std::memcmp(remote.data(), local.data(), 1000), 0);

  // Exactly the limit is accepted (its table is what the target takes); adjacent ranges beyond it merge.
  ranges.resize(kMaxRanges);
  RMA_OK(hetcclPutBatch(ml, r, ranges.data(), ranges.size(), &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  EXPECT_EQ(remote[2 * (kMaxRanges - 1)], 5);
  RMA_OK(hetcclRemoteMemRelease(r));
  RMA_OK(hetcclMemDeregister(ml));
  RMA_OK(hetcclMemDeregister(mr));
}

INSTANTIATE_TEST_SUITE_P(Transports, RmaBatchLimit, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace hetccl::test
