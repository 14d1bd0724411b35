// Batched transfers (a KV cache as hundreds of blocks in one call) and gets of random ranges: every byte
// lands where it should, nothing else is touched.
#include <cstring>
#include <random>

#include "rma_fixture.hpp"

namespace hetccl::test {
namespace {

using RmaBatch = RmaTest;

TEST_P(RmaBatch, HundredsOfRangesPutAndGet) {
  start(2);
  constexpr size_t kBlocks = 600;
  std::mt19937_64 rng(5);
  // Blocks of mixed sizes: KV-cache-like 16 KiB blocks, small ones (packed), large ones (cut into pieces).
  std::vector<size_t> size(kBlocks);
  for (size_t i = 0; i < kBlocks; ++i) size[i] = i % 50 == 0 ? (1 << 20) + 4097 : i % 3 == 0 ? 1 + rng() % 700 : 16 << 10;
  size_t total = 0;
  for (size_t s : size) total += s;
  std::vector<unsigned char> local(total + 4096), remote(2 * total + 4096, 0xee), back(total + 4096, 0);
  for (auto& c : local) c = static_cast<unsigned char>(rng());
  // Remote slots in shuffled order with gaps; local offsets contiguous, some remote slots adjacent.
  std::vector<size_t> order(kBlocks);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<hetcclRmaRange_t> ranges(kBlocks);
  size_t lo = 0, ro = 0;
  std::vector<size_t> remoteAt(kBlocks);
  for (size_t k = 0; k < kBlocks; ++k) {
    remoteAt[order[k]] = ro;
    ro += size[order[k]] + (k % 4 == 0 ? 0 : 1 + rng() % 64);
  }
  ASSERT_LE(ro, remote.size());
  for (size_t i = 0; i < kBlocks; ++i) {
    ranges[i] = {lo, remoteAt[i], size[i]};
    lo += size[i];
  }
  hetcclMemDesc_t desc;
  hetcclMem_t ml = reg(0, local.data(), local.size());
  hetcclMem_t mback = reg(0, back.data(), back.size());
  hetcclMem_t mr = reg(1, remote.data(), remote.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  hetcclRequest_t req;
  RMA_OK(hetcclPutBatch(ml, r, ranges.data(), ranges.size(), &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  std::vector<unsigned char> expect(remote.size(), 0xee);
  for (const auto& x : ranges) std::memcpy(expect.data() + x.remoteOffset, local.data() + x.localOffset, x.bytes);
  EXPECT_EQ(std::memcmp(remote.data(), expect.data(), remote.size()), 0);

  RMA_OK(hetcclGetBatch(mback, r, ranges.data(), ranges.size(), &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  EXPECT_EQ(std::memcmp(back.data(), local.data(), total), 0);

  // Gets of random single ranges.
  for (int i = 0; i < 200; ++i) {
    const size_t bytes = 1 + rng() % (i % 10 == 0 ? 3 << 20 : 5000);
    const size_t from = rng() % (remote.size() - bytes + 1);
    const size_t to = rng() % (back.size() - bytes + 1);
    RMA_OK(hetcclGet(mback, to, r, from, bytes, &req));
    RMA_OK(hetcclRequestWait(req));
    RMA_OK(hetcclRequestFree(req));
    ASSERT_EQ(std::memcmp(back.data() + to, expect.data() + from, bytes), 0) << "get " << i;
  }
  RMA_OK(hetcclRemoteMemRelease(r));
  RMA_OK(hetcclMemDeregister(ml));
  RMA_OK(hetcclMemDeregister(mback));
  RMA_OK(hetcclMemDeregister(mr));
}

INSTANTIATE_TEST_SUITE_P(Transports, RmaBatch, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace hetccl::test
