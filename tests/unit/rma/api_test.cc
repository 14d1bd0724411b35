// Every RMA call once, and its argument checks: null pointers, ranges outside the local or the remote
// registration, released and foreign handles, calls before hetcclRmaInit; descriptors that are garbage,
// truncated, bit-flipped, of another version, of another job or communicator, stale.
#include <cstring>
#include <numeric>

#include "rma_fixture.hpp"

namespace hetccl::test {
namespace {

using RmaApi = RmaTest;

TEST_P(RmaApi, EveryCallOnce) {
  start(2);
  std::vector<unsigned char> a(4096), b(4096, 0);
  std::iota(a.begin(), a.end(), 0);
  hetcclMemDesc_t descB;
  hetcclMem_t ma = reg(0, a.data(), a.size());
  hetcclMem_t mb = reg(1, b.data(), b.size(), &descB);
  hetcclMemKind_t kind;
  size_t bytes = 0;
  RMA_OK(hetcclMemQuery(mb, &kind, &bytes));
  EXPECT_EQ(kind, hetcclMemHost);
  EXPECT_EQ(bytes, 4096u);
  hetcclRemoteMem_t rb = import(0, descB);
  int owner = -1;
  RMA_OK(hetcclRemoteMemQuery(rb, &owner, &bytes));
  EXPECT_EQ(owner, 1);
  EXPECT_EQ(bytes, 4096u);

  hetcclRequest_t req;
  RMA_OK(hetcclPut(ma, 10, rb, 100, 1000, &req));
  RMA_OK(hetcclRequestWait(req));
  int done = 0;
  RMA_OK(hetcclRequestTest(req, &done));
  EXPECT_EQ(done, 1);
  RMA_OK(hetcclRequestFree(req));
  EXPECT_EQ(std::memcmp(b.data() + 100, a.data() + 10, 1000), 0);

  RMA_OK(hetcclNotify(comms_[0], 1, 42));
  int peer = -1, received = 0;
  uint64_t tag = 0;
  for (int i = 0; i < 10000 && !received; ++i) {
    RMA_OK(hetcclNotifyPoll(comms_[1], &peer, &tag, &received));
    if (!received) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(received, 1);
  EXPECT_EQ(peer, 0);
  EXPECT_EQ(tag, 42u);
  RMA_OK(hetcclNotifyPoll(comms_[1], &peer, &tag, &received));
  EXPECT_EQ(received, 0);
  EXPECT_EQ(hetcclNotifyWait(comms_[1], 0, 7, 0), hetcclInProgress);
  EXPECT_NE(lastError().find("tag 7"), std::string::npos) << lastError();

  std::vector<unsigned char> back(1000, 0);
  hetcclMem_t mback = reg(0, back.data(), back.size());
  RMA_OK(hetcclGet(mback, 0, rb, 100, 1000, &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  EXPECT_EQ(std::memcmp(back.data(), a.data() + 10, 1000), 0);

  hetcclRmaRange_t ranges[2] = {{0, 0, 10}, {20, 30, 10}};
  RMA_OK(hetcclPutBatch(ma, rb, ranges, 2, &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  RMA_OK(hetcclGetBatch(mback, rb, ranges, 2, &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  EXPECT_EQ(std::memcmp(back.data() + 20, a.data() + 20, 10), 0);

  // Zero bytes: a request that is done at once.
  RMA_OK(hetcclPut(ma, 4096, rb, 4096, 0, &req));
  RMA_OK(hetcclRequestTest(req, &done));
  EXPECT_EQ(done, 1);
  RMA_OK(hetcclRequestFree(req));

  EXPECT_EQ(hetcclPutOnStream(ma, 0, rb, 0, 8, nullptr), hetcclInvalidUsage);
  EXPECT_NE(lastError().find("not supported"), std::string::npos);
  EXPECT_EQ(hetcclGetOnStream(ma, 0, rb, 0, 8, nullptr), hetcclInvalidUsage);
  EXPECT_EQ(hetcclPutBatchOnStream(ma, rb, ranges, 2, nullptr), hetcclInvalidUsage);
  EXPECT_NE(lastError().find("not supported"), std::string::npos);
  EXPECT_EQ(hetcclGetBatchOnStream(mback, rb, ranges, 2, nullptr), hetcclInvalidUsage);

  RMA_OK(hetcclRemoteMemRelease(rb));
  RMA_OK(hetcclMemDeregister(ma));
  RMA_OK(hetcclMemDeregister(mb));
  RMA_OK(hetcclMemDeregister(mback));
}

TEST_P(RmaApi, BadArgumentsChangeNothing) {
  start(2);
  std::vector<unsigned char> a(256, 1), b(128, 0);
  hetcclMemDesc_t descB, descA;
  hetcclMem_t ma = reg(0, a.data(), a.size(), &descA);
  hetcclMem_t mb = reg(1, b.data(), b.size(), &descB);
  hetcclRemoteMem_t rb = import(0, descB);
  hetcclRequest_t req = nullptr;
  hetcclMem_t m = nullptr;

  EXPECT_EQ(hetcclRmaInit(comms_[0]), hetcclInvalidUsage);  // once per communicator
  EXPECT_EQ(hetcclMemRegister(comms_[0], nullptr, 8, &m), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemRegister(comms_[0], a.data(), 0, &m), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemRegister(comms_[0], a.data(), 8, nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemRegister(nullptr, a.data(), 8, &m), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemExport(ma, nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemExport(nullptr, &descA), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemImport(comms_[0], nullptr, &rb), hetcclInvalidArgument);
  hetcclRemoteMem_t r2 = nullptr;
  EXPECT_EQ(hetcclMemImport(comms_[0], &descA, &r2), hetcclInvalidArgument);  // its own registration
  EXPECT_NE(lastError().find("own"), std::string::npos) << lastError();
  EXPECT_EQ(r2, nullptr);

  // Local range outside the local registration, remote range outside the remote one (and overflow).
  EXPECT_EQ(hetcclPut(ma, 200, rb, 0, 100, &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("local range"), std::string::npos) << lastError();
  EXPECT_EQ(hetcclPut(ma, 0, rb, 100, 29, &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("remote range"), std::string::npos) << lastError();
  EXPECT_EQ(hetcclGet(ma, 0, rb, SIZE_MAX, 2, &req), hetcclInvalidArgument);
  EXPECT_EQ(hetcclPut(ma, 0, rb, 8, SIZE_MAX, &req), hetcclInvalidArgument);
  EXPECT_EQ(hetcclPut(ma, 0, rb, 0, 8, nullptr), hetcclInvalidArgument);
  hetcclRmaRange_t ranges[3] = {{0, 0, 8}, {8, 8, 8}, {0, 125, 8}};
  EXPECT_EQ(hetcclPutBatch(ma, rb, ranges, 3, &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("range 2"), std::string::npos) << lastError();
  EXPECT_EQ(hetcclPutBatch(ma, rb, nullptr, 3, &req), hetcclInvalidArgument);
  EXPECT_EQ(req, nullptr);
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](unsigned char c) { return c == 0; }));  // nothing was written

  EXPECT_EQ(hetcclNotify(comms_[0], 0, 1), hetcclInvalidArgument);  // itself
  EXPECT_EQ(hetcclNotify(comms_[0], 2, 1), hetcclInvalidArgument);
  EXPECT_EQ(hetcclNotify(comms_[0], -1, 1), hetcclInvalidArgument);
  EXPECT_EQ(hetcclNotifyWait(comms_[0], 5, 1, 0), hetcclInvalidArgument);
  EXPECT_EQ(hetcclNotifyWait(comms_[0], 1, 1, -2), hetcclInvalidArgument);
  EXPECT_EQ(hetcclNotifyPoll(comms_[0], nullptr, nullptr, nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclRequestTest(nullptr, nullptr), hetcclInvalidArgument);
  EXPECT_EQ(hetcclRequestWait(nullptr), hetcclInvalidArgument);

  // Released handles: detected, never dereferenced.
  RMA_OK(hetcclRemoteMemRelease(rb));
  EXPECT_EQ(hetcclRemoteMemRelease(rb), hetcclInvalidArgument);
  EXPECT_EQ(hetcclPut(ma, 0, rb, 0, 8, &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("not a live handle"), std::string::npos) << lastError();
  RMA_OK(hetcclMemDeregister(ma));
  EXPECT_EQ(hetcclMemDeregister(ma), hetcclInvalidArgument);
  EXPECT_EQ(hetcclMemExport(ma, &descA), hetcclInvalidArgument);
  EXPECT_EQ(hetcclRequestFree(reinterpret_cast<hetcclRequest_t>(ma)), hetcclInvalidArgument);  // wrong kind
  EXPECT_EQ(hetcclRequestWait(reinterpret_cast<hetcclRequest_t>(0x1234)), hetcclInvalidArgument);  // garbage
  RMA_OK(hetcclMemDeregister(mb));
}

TEST_P(RmaApi, CallsBeforeRmaInit) {
  comms_ = makeJob(2, GetParam());
  ASSERT_EQ(comms_.size(), 2u);
  std::vector<unsigned char> a(64);
  hetcclMem_t m = nullptr;
  EXPECT_EQ(hetcclMemRegister(comms_[0], a.data(), a.size(), &m), hetcclInvalidUsage);
  EXPECT_NE(lastError().find("hetcclRmaInit"), std::string::npos) << lastError();
  EXPECT_EQ(hetcclNotify(comms_[0], 1, 1), hetcclInvalidUsage);
}

// Descriptors: garbage, truncated, every single bit flipped, another version, another job, another
// communicator of the same job, a deregistered region (stale at the target, nothing written).
TEST_P(RmaApi, DescriptorsAreValidated) {
  start(2);
  std::vector<unsigned char> a(64, 7), b(64, 0);
  hetcclMemDesc_t desc;
  hetcclMem_t ma = reg(0, a.data(), a.size());
  hetcclMem_t mb = reg(1, b.data(), b.size(), &desc);
  hetcclRemoteMem_t r = nullptr;
  auto rejects = [&](const hetcclMemDesc_t& d, const char* needle) {
    hetcclRemoteMem_t out = nullptr;
    EXPECT_EQ(hetcclMemImport(comms_[0], &d, &out), hetcclInvalidArgument);
    EXPECT_NE(lastError().find(needle), std::string::npos) << lastError();
    EXPECT_EQ(out, nullptr);
  };
  hetcclMemDesc_t bad;
  for (size_t i = 0; i < sizeof bad.bytes; ++i) bad.bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  rejects(bad, "not a hetccl memory descriptor");
  bad = desc;
  std::memset(bad.bytes + 64, 0, 64);  // truncated
  rejects(bad, "authentication");
  bad = desc;
  bad.bytes[4] = 2;  // version 2
  rejects(bad, "version 2");
  for (size_t bit = 0; bit < 8 * HETCCL_MEM_DESC_BYTES; ++bit) {
    bad = desc;
    bad.bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    hetcclRemoteMem_t out = nullptr;
    ASSERT_EQ(hetcclMemImport(comms_[0], &bad, &out), hetcclInvalidArgument) << "bit " << bit;
  }

  // Another job (another secret), and another communicator of this job (a split).
  std::vector<hetcclComm_t> other = makeJob(2, GetParam());
  ASSERT_EQ(other.size(), 2u);
  ASSERT_TRUE(rmaInitAll(other));
  std::vector<unsigned char> c(64);
  hetcclMem_t mc = nullptr;
  hetcclMemDesc_t descOther;
  RMA_OK(hetcclMemRegister(other[1], c.data(), c.size(), &mc));
  RMA_OK(hetcclMemExport(mc, &descOther));
  rejects(descOther, "another job");
  std::vector<hetcclComm_t> child(2, nullptr);
  onRanks(2, [&](int rank) { EXPECT_EQ(hetcclCommSplit(comms_[rank], 0, rank, &child[rank], nullptr), hetcclSuccess); });
  ASSERT_TRUE(rmaInitAll(child));
  EXPECT_EQ(hetcclMemImport(child[0], &desc, &r), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("another communicator"), std::string::npos) << lastError();
  // A local registration of one communicator with a remote handle of another.
  hetcclRemoteMem_t rOther = nullptr;
  hetcclMemDesc_t descChild;
  hetcclMem_t mChild = nullptr;
  RMA_OK(hetcclMemRegister(child[1], c.data(), c.size(), &mChild));
  RMA_OK(hetcclMemExport(mChild, &descChild));
  RMA_OK(hetcclMemImport(child[0], &descChild, &rOther));
  hetcclRequest_t req = nullptr;
  EXPECT_EQ(hetcclPut(ma, 0, rOther, 0, 8, &req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("different communicators"), std::string::npos) << lastError();
  RMA_OK(hetcclRemoteMemRelease(rOther));
  RMA_OK(hetcclMemDeregister(mChild));
  RMA_OK(hetcclMemDeregister(mc));
  for (auto cc : child) hetcclCommAbort(cc);
  for (auto cc : other) hetcclCommAbort(cc);

  // Stale: deregistered after the import; a new registration (same slot, next generation) is not hit.
  r = import(0, desc);
  RMA_OK(hetcclMemDeregister(mb));
  std::vector<unsigned char> fresh(64, 0);
  hetcclMem_t mf = reg(1, fresh.data(), fresh.size());
  RMA_OK(hetcclPut(ma, 0, r, 0, 64, &req));
  EXPECT_EQ(hetcclRequestWait(req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("rank 1"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("stale"), std::string::npos) << lastError();
  int done = 1;
  EXPECT_EQ(hetcclRequestTest(req, &done), hetcclInvalidArgument);  // the error stays
  EXPECT_EQ(done, 0);
  RMA_OK(hetcclRequestFree(req));
  RMA_OK(hetcclGet(ma, 0, r, 0, 64, &req));
  EXPECT_EQ(hetcclRequestWait(req), hetcclInvalidArgument);
  EXPECT_NE(lastError().find("stale"), std::string::npos) << lastError();
  RMA_OK(hetcclRequestFree(req));
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](unsigned char x) { return x == 0; }));
  EXPECT_TRUE(std::all_of(fresh.begin(), fresh.end(), [](unsigned char x) { return x == 0; }));
  // The channel still works after refused transfers.
  hetcclMemDesc_t descF;
  RMA_OK(hetcclMemExport(mf, &descF));
  hetcclRemoteMem_t rf = import(0, descF);
  RMA_OK(hetcclPut(ma, 0, rf, 0, 64, &req));
  RMA_OK(hetcclRequestWait(req));
  RMA_OK(hetcclRequestFree(req));
  EXPECT_TRUE(std::all_of(fresh.begin(), fresh.end(), [](unsigned char x) { return x == 7; }));
  RMA_OK(hetcclRemoteMemRelease(r));
  RMA_OK(hetcclRemoteMemRelease(rf));
  RMA_OK(hetcclMemDeregister(ma));
  RMA_OK(hetcclMemDeregister(mf));
}

// A local registration with requests in flight cannot be deregistered; a pending request cannot be freed.
TEST_P(RmaApi, BusyHandlesAreRefused) {
  start(2);
  std::vector<unsigned char> a(32 << 20, 3), b(32 << 20, 0);
  hetcclMemDesc_t desc;
  hetcclMem_t ma = reg(0, a.data(), a.size());
  hetcclMem_t mb = reg(1, b.data(), b.size(), &desc);
  hetcclRemoteMem_t r = import(0, desc);
  hetcclRequest_t req;
  RMA_OK(hetcclPut(ma, 0, r, 0, a.size(), &req));
  int done = 0;
  RMA_OK(hetcclRequestTest(req, &done));
  if (!done) {  // 32 MiB is practically never done at once; when it is, there is nothing to check
    hetcclResult_t f = hetcclRequestFree(req);
    if (f != hetcclSuccess) {
      EXPECT_EQ(f, hetcclInvalidUsage);
      hetcclResult_t d = hetcclMemDeregister(ma);
      if (d != hetcclSuccess) {
        EXPECT_EQ(d, hetcclInvalidUsage);
      } else {
        ma = nullptr;
      }
      RMA_OK(hetcclRequestWait(req));
      RMA_OK(hetcclRequestFree(req));
    }
  } else {
    RMA_OK(hetcclRequestFree(req));
  }
  EXPECT_EQ(b[b.size() - 1], 3);
  if (ma) {
    RMA_OK(hetcclMemDeregister(ma));
  }
  RMA_OK(hetcclMemDeregister(mb));
  RMA_OK(hetcclRemoteMemRelease(r));
}

INSTANTIATE_TEST_SUITE_P(Transports, RmaApi, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace hetccl::test
