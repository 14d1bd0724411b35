// Notification after data, under stress: senders issue thousands of puts of random sizes and offsets
// (single and batched, never waited for before the notification), then notify; the target checks every
// byte of its region against a replay of the same puts at the moment the notification arrives. Also:
// many tags interleaved and taken out of order; gets of random ranges.
#include <cstring>
#include <random>

#include "rma_fixture.hpp"

namespace hetccl::test {
namespace {

using RmaOrdering = RmaTest;

constexpr size_t kSource = 1 << 20;   // every sender's source: random bytes, never changed
constexpr size_t kWindow = 256 << 10; // every sender's part of the target region

struct Op {
  std::vector<hetcclRmaRange_t> ranges;  // localOffset into the source, remoteOffset into the window
};

// The puts of one round of one sender: 1..24 operations, a third of them batches of up to 40 ranges.
std::vector<Op> roundOps(std::mt19937_64& rng) {
  std::vector<Op> ops(1 + rng() % 24);
  for (Op& op : ops) {
    const size_t n = rng() % 3 == 0 ? 1 + rng() % 40 : 1;
    for (size_t i = 0; i < n; ++i) {
      // Mostly small, sometimes large (several pieces), sometimes adjacent to the previous range.
      size_t bytes = rng() % 8 == 0 ? 1 + rng() % (96 << 10) : 1 + rng() % 3000;
      size_t remote = rng() % (kWindow - bytes + 1);
      size_t local = rng() % (kSource - bytes + 1);
      if (i > 0 && rng() % 4 == 0) {
        const auto& prev = op.ranges.back();
        if (prev.remoteOffset + prev.bytes + bytes <= kWindow && prev.localOffset + prev.bytes + bytes <= kSource) {
          remote = prev.remoteOffset + prev.bytes;
          local = prev.localOffset + prev.bytes;
        }
      }
      op.ranges.push_back({local, remote, bytes});
    }
  }
  return ops;
}

std::vector<unsigned char> sourceOf(int sender) {
  std::vector<unsigned char> s(kSource);
  std::mt19937_64 rng(1000 + sender);
  for (auto& c : s) c = static_cast<unsigned char>(rng());
  return s;
}

// Senders 0 and 2 (when present) write their windows of rank 1's region; rank 1 checks at each
// notification (taken with NotifyPoll, in arrival order) and answers so the sender starts its next round.
void stress(RmaTest& t, std::vector<hetcclComm_t>& comms, int rounds) {
  const int n = static_cast<int>(comms.size());
  const int target = 1;
  std::vector<int> senders;
  for (int r = 0; r < n; ++r)
    if (r != target) senders.push_back(r);
  std::vector<unsigned char> region(kWindow * n, 0);
  hetcclMemDesc_t desc;
  hetcclMem_t regionMem = nullptr;
  RMA_OK(hetcclMemRegister(comms[target], region.data(), region.size(), &regionMem));
  RMA_OK(hetcclMemExport(regionMem, &desc));
  std::atomic<long> puts{0};
  onRanks(n, [&](int rank) {
    if (rank == target) {
      std::vector<std::vector<unsigned char>> shadow(n, std::vector<unsigned char>(kWindow, 0));
      std::vector<std::mt19937_64> rng;
      std::vector<std::vector<unsigned char>> source;
      for (int s = 0; s < n; ++s) {
        rng.emplace_back(77 + s);
        source.push_back(sourceOf(s));
      }
      std::vector<int> round(n, 0);
      int finished = 0;
      bool failed = false;
      while (finished < static_cast<int>(senders.size())) {
        int peer = -1, got = 0;
        uint64_t tag = 0;
        ASSERT_EQ(hetcclNotifyPoll(comms[target], &peer, &tag, &got), hetcclSuccess) << lastError();
        if (!got) {
          std::this_thread::yield();
          continue;
        }
        ASSERT_EQ(tag, static_cast<uint64_t>(round[peer])) << "notifications of one sender arrive in order";
        for (const Op& op : roundOps(rng[peer]))
          for (const auto& r : op.ranges)
            std::memcpy(shadow[peer].data() + r.remoteOffset, source[peer].data() + r.localOffset, r.bytes);
        // Every byte of the sender's window, now: the notification must not overtake any put's data.
        const unsigned char* seen = region.data() + kWindow * peer;
        if (!failed && std::memcmp(seen, shadow[peer].data(), kWindow) != 0) {
          size_t i = 0;
          while (seen[i] == shadow[peer][i]) ++i;
          ADD_FAILURE() << "round " << round[peer] << " of rank " << peer << ": byte " << i << " is " << int(seen[i])
                        << ", expected " << int(shadow[peer][i]) << " when the notification arrived";
          failed = true;  // keep answering, so that the senders finish
        }
        ++round[peer];
        if (round[peer] == rounds) ++finished;
        ASSERT_EQ(hetcclNotify(comms[target], peer, 1000000 + tag), hetcclSuccess) << lastError();
      }
      return;
    }
    std::vector<unsigned char> source = sourceOf(rank);
    hetcclMem_t src = nullptr;
    ASSERT_EQ(hetcclMemRegister(comms[rank], source.data(), source.size(), &src), hetcclSuccess);
    hetcclRemoteMem_t remote = nullptr;
    ASSERT_EQ(hetcclMemImport(comms[rank], &desc, &remote), hetcclSuccess) << lastError();
    std::mt19937_64 rng(77 + rank);
    std::vector<hetcclRequest_t> reqs;
    for (int round = 0; round < rounds; ++round) {
      for (Op op : roundOps(rng)) {
        for (auto& r : op.ranges) r.remoteOffset += kWindow * rank;
        hetcclRequest_t req;
        if (op.ranges.size() == 1)
          ASSERT_EQ(hetcclPut(src, op.ranges[0].localOffset, remote, op.ranges[0].remoteOffset, op.ranges[0].bytes, &req),
                    hetcclSuccess) << lastError();
        else
          ASSERT_EQ(hetcclPutBatch(src, remote, op.ranges.data(), op.ranges.size(), &req), hetcclSuccess) << lastError();
        reqs.push_back(req);
        puts += static_cast<long>(op.ranges.size());
      }
      ASSERT_EQ(hetcclNotify(comms[rank], target, round), hetcclSuccess) << lastError();
      ASSERT_EQ(hetcclNotifyWait(comms[rank], target, 1000000 + round, 60000), hetcclSuccess) << lastError();
      // Requests finish in order; free the ones that are done (all of this round's are: acked before the
      // target answered).
      for (hetcclRequest_t req : reqs) {
        int done = 0;
        ASSERT_EQ(hetcclRequestTest(req, &done), hetcclSuccess) << lastError();
        ASSERT_EQ(hetcclRequestWait(req), hetcclSuccess) << lastError();
        ASSERT_EQ(hetcclRequestFree(req), hetcclSuccess);
      }
      reqs.clear();
    }
    EXPECT_EQ(hetcclRemoteMemRelease(remote), hetcclSuccess);
    EXPECT_EQ(hetcclMemDeregister(src), hetcclSuccess);
  });
  EXPECT_GT(puts.load(), 1000);
  RMA_OK(hetcclMemDeregister(regionMem));
}

TEST_P(RmaOrdering, NotificationNeverOvertakesData) {
  start(3);
  stress(*this, comms_, 150);
}

// One sender, many tags: notifications are taken by (peer, tag) out of order; the rest stay queued in
// order (NotifyPoll afterwards sees them FIFO).
TEST_P(RmaOrdering, ManyTagsInterleaved) {
  start(2);
  constexpr int kTags = 200;
  onRanks(2, [&](int rank) {
    if (rank == 0) {
      for (int i = 0; i < kTags; ++i) ASSERT_EQ(hetcclNotify(comms_[0], 1, (i * 7919) % kTags), hetcclSuccess);
      return;
    }
    std::vector<bool> taken(kTags, false);
    for (int t = kTags - 1; t >= 0; t -= 3) {  // from the last tag backwards, every third
      ASSERT_EQ(hetcclNotifyWait(comms_[1], 0, t, -1), hetcclSuccess) << lastError();
      taken[t] = true;
    }
    for (int i = 0; i < kTags; ++i) {
      const int expect = (i * 7919) % kTags;
      if (taken[expect]) continue;
      int peer = -1, got = 0;
      uint64_t tag = 0;
      for (int tries = 0; tries < 100000 && !got; ++tries) {  // the later ones may still be on their way
        ASSERT_EQ(hetcclNotifyPoll(comms_[1], &peer, &tag, &got), hetcclSuccess);
        if (!got) std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      ASSERT_EQ(got, 1);
      EXPECT_EQ(peer, 0);
      EXPECT_EQ(tag, static_cast<uint64_t>(expect)) << "FIFO order of the remaining notifications";
    }
    int peer = -1, got = 0;
    uint64_t tag = 0;
    ASSERT_EQ(hetcclNotifyPoll(comms_[1], &peer, &tag, &got), hetcclSuccess);
    EXPECT_EQ(got, 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, RmaOrdering, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace hetccl::test
